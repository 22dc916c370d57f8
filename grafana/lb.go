package grafana

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// lbPanels are the load balancer in front of a target (its haproxy:), as
// the harness' sampler reads HAProxy's counters every 100 ms. A run
// without one exports none of herdbench_lb_*: the panels show no data.
func lbPanels(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithPanel(graph("LB sends per client request",
			"Requests HAProxy sent to its servers per request its backend received (stot / req_tot, over the rate window): 1 is one send each; its retries and redispatches raise it. No data without a load balancer.",
			"none", 8,
			q(`sum by (arm) (rate(herdbench_lb_sends_total{arm=~"$arm"}[$__rate_interval])) / sum by (arm) (rate(herdbench_lb_requests_total{arm=~"$arm"}[$__rate_interval]))`, "{{arm}}"))).
		WithPanel(graph("LB retries/s",
			"HAProxy's retries, however they ended, to the same server or another (its servers' stot beyond its req_tot, within wretr + wredis), per second. No data without a load balancer.",
			"short", 8,
			q(`sum by (arm) (rate(herdbench_lb_retries_total{arm=~"$arm"}[$__rate_interval]))`, "{{arm}}"))).
		WithPanel(graph("LB redispatches/s",
			"Requests HAProxy sent to another server after one failed (the backend's wredis), per second. No data without a load balancer.",
			"short", 8,
			q(`sum by (arm) (rate(herdbench_lb_redispatches_total{arm=~"$arm"}[$__rate_interval]))`, "{{arm}}"))).
		WithPanel(graph("LB sends/s by server",
			"Requests HAProxy sent to each server per second (its stot), retries included: how the herd spread over the servers. No data without a load balancer.",
			"reqps", 12,
			q(`sum by (arm, server) (rate(herdbench_lb_sends_total{arm=~"$arm"}[$__rate_interval]))`, "{{server}} ({{arm}})"))).
		WithPanel(graph("LB queue by server",
			"Requests HAProxy holds queued now (qcur): for each server at its maxconn, and BACKEND for those waiting for any server. No data without a load balancer.",
			"short", 12,
			q(`max by (arm, server) (herdbench_lb_queue{arm=~"$arm"})`, "{{server}} ({{arm}})")))
}
