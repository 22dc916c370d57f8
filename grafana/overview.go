package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// overview is "Herd overview": one herd as it happens, at the database,
// the cache, the replicas and the clients.
func overview() *dashboard.DashboardBuilder {
	return workerPanels(lbPanels(classPanels(board("herdbench-overview", "Herd overview",
		"One herd as it happens: the database, the cache, the replicas and the clients, with the trigger instant T marked in red.").
		WithPanel(graph("DB queries/s",
			"Item queries Postgres ran, per second: pg_stat_statements calls of the item query by the app's role (the postgres exporter), and the same loads as the replicas count them (herdbench_api_loads_total). A herd is the spike after the red T marker; the two lines agree.",
			"short", 12,
			q("sum(rate(pg_stat_statements_item_calls_total[$__rate_interval]))", "pg_stat_statements (item query)"),
			q("sum(rate(herdbench_api_loads_total[$__rate_interval]))", "replicas' loads"))).
		WithPanel(graph("Client latency p50 / p99",
			"What the harness' clients waited, measured from each request's intended send time (an open model: a stalled generator is counted, not hidden), over all replicas and the selected arms.",
			"s", 12,
			q(`histogram_quantile(0.99, sum by (le) (rate(herdbench_request_duration_seconds_bucket{arm=~"$arm"}[$__rate_interval])))`, "p99"),
			q(`histogram_quantile(0.5, sum by (le) (rate(herdbench_request_duration_seconds_bucket{arm=~"$arm"}[$__rate_interval])))`, "p50"))).
		WithPanel(graph("Drop rate",
			"Share of the clients' requests that did not end ok (timeout, connection error, 5xx, shed, throttled): not ok / requests, as in the results.",
			"percentunit", 8,
			q(`sum(rate(herdbench_requests_total{arm=~"$arm",outcome!="ok"}[$__rate_interval])) / sum(rate(herdbench_requests_total{arm=~"$arm"}[$__rate_interval]))`, "drop rate")).
			Min(0)).
		WithPanel(graph("Client requests/s by outcome",
			"Every request ends in exactly one outcome: ok, timeout, conn, 5xx, shed (429/503), other, throttled (refused by the client's adaptive throttling, never sent).",
			"short", 8,
			q(`sum by (outcome) (rate(herdbench_requests_total{arm=~"$arm"}[$__rate_interval]))`, "{{outcome}}")).
			FillOpacity(40).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal).Group("A"))).
		WithPanel(graph("Retries",
			"Retries/s the clients sent (attempts minus requests), and the retry amplification attempts / requests (right axis): 1 means no retries; N retries at 100% failure make it N+1.",
			"short", 8,
			q(`sum(rate(herdbench_attempts_total{arm=~"$arm"}[$__rate_interval])) - sum(rate(herdbench_requests_total{arm=~"$arm"}[$__rate_interval]))`, "retries/s"),
			q(`sum(rate(herdbench_attempts_total{arm=~"$arm"}[$__rate_interval])) / sum(rate(herdbench_requests_total{arm=~"$arm"}[$__rate_interval]))`, "amplification")).
			OverrideByName("amplification", []dashboard.DynamicConfigValue{
				{Id: "custom.axisPlacement", Value: "right"}, {Id: "unit", Value: "none"}})).
		WithPanel(graph("Cache hit ratio",
			"Redis keyspace hits / (hits + misses) per second, from the redis exporter: a herd shows as the dip at T, and a mitigation by how fast it comes back.",
			"percentunit", 8,
			q("sum(rate(redis_keyspace_hits_total[$__rate_interval])) / (sum(rate(redis_keyspace_hits_total[$__rate_interval])) + sum(rate(redis_keyspace_misses_total[$__rate_interval])))", "hit ratio")).
			Min(0).Max(1)).
		WithPanel(graph("How the replicas answered",
			"The replicas' own count of item requests by how they were served (the X-Cache values): hit, miss (this request loaded), coalesced, stale, waited, local, early, shed, error.",
			"short", 8,
			q("sum by (outcome) (rate(herdbench_api_requests_total[$__rate_interval]))", "{{outcome}}"))).
		WithPanel(graph("Connections",
			"Postgres backends of the app's role (all, and running a query), Redis clients connected, and new Redis connections per second (a reconnect storm; the redis exporter itself opens one per scrape).",
			"short", 8,
			q("sum(pg_stat_activity_app_connections)", "postgres: app backends"),
			q("sum(pg_stat_activity_app_active)", "postgres: app backends active"),
			q("sum(redis_connected_clients)", "redis: clients"),
			q("sum(rate(redis_connections_received_total[$__rate_interval]))", "redis: new connections/s"))).
		WithPanel(graph("DB loads in flight, by replica",
			"Item queries running now in each replica, pool wait included: a herd piles up here when loads outrun the connection pool.",
			"short", 12,
			q("sum by (replica) (herdbench_api_loads_in_flight)", "{{replica}}"))).
		WithPanel(graph("DB load time p99",
			"The replicas' item query time, including the wait for a pooled connection: the query cost plus queueing.",
			"s", 12,
			q("histogram_quantile(0.99, sum by (le) (rate(herdbench_api_load_duration_seconds_bucket[$__rate_interval])))", "p99 load time"))).
		WithPanel(graph("Work the mitigations did",
			"Per second, over the replicas: requests that shared a singleflight load (coalesced), were answered with the stale copy (stale served), waited for the lock or lease holder (lock waits), loads refused by ratelimit or breaker (shed), and early recomputations (xfetch, early).",
			"short", 24,
			q("sum(rate(herdbench_api_coalesced_total[$__rate_interval]))", "coalesced"),
			q("sum(rate(herdbench_api_stale_served_total[$__rate_interval]))", "stale served"),
			q("sum(rate(herdbench_api_lock_waits_total[$__rate_interval]))", "lock waits"),
			q("sum(rate(herdbench_api_shed_total[$__rate_interval]))", "shed"),
			q("sum(rate(herdbench_api_early_loads_total[$__rate_interval]))", "early loads"))))))
}
