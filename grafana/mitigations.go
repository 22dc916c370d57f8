package grafana

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// mitigations is "Mitigations": the arms of a stampede side by side.
func mitigations() *dashboard.DashboardBuilder {
	return judgedPanels(board("herdbench-mitigations", "Mitigations",
		"The arms of a stampede side by side: each arm's herd at the database and what its clients saw, T marked in red.").
		WithPanel(graph("DB queries/s, by the arm running",
			"pg_stat_statements calls of the item query per second, coloured by the arm whose load was running (herdbench_arm_running): arms run one after another, so each arm's herd is its own stretch of line.",
			"short", 24,
			q(`sum(rate(pg_stat_statements_item_calls_total[$__rate_interval])) * on() group_left(arm) (max by (arm) (herdbench_arm_running{arm=~"$arm"}) == 1)`, "{{arm}}"))).
		WithPanel(graph("Client p99 by arm",
			"Client latency p99 from the intended send time, one line per arm.",
			"s", 12,
			q(`histogram_quantile(0.99, sum by (arm, le) (rate(herdbench_request_duration_seconds_bucket{arm=~"$arm"}[$__rate_interval])))`, "{{arm}}"))).
		WithPanel(graph("Drop rate by arm",
			"Share of requests not ok, one line per arm.",
			"percentunit", 12,
			q(`sum by (arm) (rate(herdbench_requests_total{arm=~"$arm",outcome!="ok"}[$__rate_interval])) / sum by (arm) (rate(herdbench_requests_total{arm=~"$arm"}[$__rate_interval]))`, "{{arm}}")).
			Min(0)).
		WithPanel(bars("Peak DB q/s, by arm",
			"The highest DB queries/s (pg_stat_statements, 1 s steps) while each arm ran, over the dashboard's time range: the size of each arm's herd.",
			"short", 6,
			q(`max by (arm) (max_over_time((sum(rate(pg_stat_statements_item_calls_total[$__rate_interval])) * on() group_left(arm) (max by (arm) (herdbench_arm_running{arm=~"$arm"}) == 1))[$__range:1s]))`, "{{arm}}"))).
		WithPanel(bars("p99 after T, by arm",
			"Client latency p99 of the requests intended from T on, each arm over the dashboard's time range: the figure the results' p99 column gives.",
			"s", 6,
			q(`histogram_quantile(0.99, sum by (arm, le) (increase(herdbench_request_duration_seconds_bucket{arm=~"$arm",phase="after"}[$__range])))`, "{{arm}}"))).
		WithPanel(bars("Drop rate after T, by arm",
			"Not ok / requests for the requests intended from T on, per arm: the results' drop rate.",
			"percentunit", 6,
			q(`sum by (arm) (increase(herdbench_requests_total{arm=~"$arm",phase="after",outcome!="ok"}[$__range])) / sum by (arm) (increase(herdbench_requests_total{arm=~"$arm",phase="after"}[$__range]))`, "{{arm}}"))).
		WithPanel(bars("Retry amplification after T, by arm",
			"Attempts / requests from T on, per arm: 1 is no retries.",
			"none", 6,
			q(`sum by (arm) (increase(herdbench_attempts_total{arm=~"$arm",phase="after"}[$__range])) / sum by (arm) (increase(herdbench_requests_total{arm=~"$arm",phase="after"}[$__range]))`, "{{arm}}"))))
}
