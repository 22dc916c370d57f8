package grafana

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// courseAnnotations mark on every panel when each arm's phase began
// (fill, warmup, before, after, drain) and its verdict, from the series
// the harness sets as the run goes (herdbench_phase_timestamp_seconds,
// herdbench_verdict_timestamp_seconds): each value is the instant to mark.
func courseAnnotations(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		Annotation(dashboard.NewAnnotationQueryBuilder().Name("Phases").Datasource(datasource()).
			Enable(true).Hide(false).IconColor("blue").
			Expr(`max by (arm, phase) (herdbench_phase_timestamp_seconds{arm=~"$arm"}) * 1000`).UseValueForTime(true).Step("1s").
			TitleFormat("{{phase}} begins").TextFormat("arm {{arm}}").TagKeys("arm,phase")).
		Annotation(dashboard.NewAnnotationQueryBuilder().Name("Verdict").Datasource(datasource()).
			Enable(true).Hide(false).IconColor("purple").
			Expr(`max by (arm, verdict) (herdbench_verdict_timestamp_seconds{arm=~"$arm"}) * 1000`).UseValueForTime(true).Step("1s").
			TitleFormat("verdict: {{verdict}}").TextFormat("arm {{arm}}: at its recovery when recovered, else at the end of its timeline").TagKeys("arm,verdict"))
}

// judgedPanels are what each arm was judged on: its loop's ratios and,
// with --escape, its load stepped down and the escape load. Set when the
// harness computes them: the loop and the escape load at the arm's end,
// each step as it is scheduled. A run without --escape has no escape
// series: those panels show no data.
func judgedPanels(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithPanel(bars("Loop ratios, by arm",
			"Each loop figure's rate after the trigger's end over its rate in the before window (the results' loop.*.ratio): 1 is unchanged; a metastable arm is held by the one furthest from 1 (held_by). Set when the arm is judged, at its end; a figure the target does not observe has none.",
			"none", 8,
			q(`max by (arm, figure) (last_over_time(herdbench_loop_ratio{arm=~"$arm"}[$__range]))`, "{{figure}} ({{arm}})"))).
		WithPanel(graph("Escape: the load stepped down",
			"The rate each escape step sends (--escape: the results' escape.steps[].rps), from the moment it is scheduled, a few 100 ms rows before it begins. No data without --escape, or before an arm is judged metastable.",
			"reqps", 10,
			q(`max by (arm) (herdbench_escape_step_rps{arm=~"$arm"})`, "{{arm}}"))).
		WithPanel(bars("Escape load, by arm",
			"The highest stepped rate at which each arm came back (the results' escape.rps), set when the arm is judged. No data without --escape, or when no step came back.",
			"reqps", 6,
			q(`max by (arm) (last_over_time(herdbench_escape_rps{arm=~"$arm"}[$__range]))`, "{{arm}}")))
}
