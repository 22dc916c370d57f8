package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// byRole is expr (by arm and class) twice: the herd's class, its legend
// prefixed "herd: ", and the bystanders, joined to herdbench_class_herd.
// A run without classes has no class series: the panel shows no data.
func byRole(expr string) []target {
	return []target{
		q(expr+` and on(arm, class) (herdbench_class_herd == 1)`, "herd: {{class}} ({{arm}})"),
		q(expr+` and on(arm, class) (herdbench_class_herd == 0)`, "{{class}} ({{arm}})"),
	}
}

// herdApart draws the herd's class thick and red.
func herdApart(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	return p.OverrideByRegexp("^herd: .*", []dashboard.DynamicConfigValue{
		{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": "red"}},
		{Id: "custom.lineWidth", Value: 3}})
}

// classPanels are a target's request classes over time: the herd's blast
// radius on the other endpoints.
func classPanels(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithPanel(herdApart(graph("p99 by request class",
			"Client latency p99 of each request class of the target file (requests:), from the intended send time; the herd's class in red, the bystanders apart. No data when the target has no classes.",
			"s", 8,
			byRole(`histogram_quantile(0.99, sum by (arm, class, le) (rate(herdbench_class_request_duration_seconds_bucket{arm=~"$arm"}[$__rate_interval])))`)...))).
		WithPanel(herdApart(graph("Goodput by request class",
			"Requests of each class that ended ok, per second; the herd's class in red. No data when the target has no classes.",
			"reqps", 8,
			byRole(`sum by (arm, class) (rate(herdbench_class_requests_total{arm=~"$arm",outcome="ok"}[$__rate_interval]))`)...))).
		WithPanel(herdApart(graph("Drop rate by request class",
			"Share of each class's requests that did not end ok; the herd's class in red. No data when the target has no classes.",
			"percentunit", 8,
			byRole(`sum by (arm, class) (rate(herdbench_class_requests_total{arm=~"$arm",outcome!="ok"}[$__rate_interval])) / sum by (arm, class) (rate(herdbench_class_requests_total{arm=~"$arm"}[$__rate_interval]))`)...).
			Min(0)))
}
