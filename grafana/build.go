package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// DatasourceUID is the provisioned Prometheus datasource's uid, the
// default of every dashboard's $datasource variable.
const DatasourceUID = "herdbench-prometheus"

// datasource is what every panel, query, variable and annotation reads
// from: the dashboard's $datasource variable, never a fixed uid, so a user
// can point the dashboards at another Prometheus.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

// target is one PromQL query of a panel.
type target struct {
	expr, legend string
}

// q is a panel's query expr, its series named by legend.
func q(expr, legend string) target { return target{expr, legend} }

// queries makes the panel's range queries, refIds A, B, ...
func queries(instant bool, ts []target) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], len(ts))
	for i, t := range ts {
		b := prometheus.NewDataqueryBuilder().RefId(string(rune('A' + i))).Datasource(datasource()).
			Expr(t.expr).LegendFormat(t.legend)
		if instant {
			b = b.Instant()
		} else {
			b = b.Range()
		}
		out[i] = b
	}
	return out
}

// graph is a time series panel w columns wide (of 24), 8 rows high: lines
// of 1 px, filled at 10%, no points, a gap where a series has no value
// (no data is never drawn as a zero), a list legend below and a tooltip of
// every series.
func graph(title, description, unit string, w uint32, ts ...target) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().Title(title).Description(description).Datasource(datasource()).
		Span(w).Height(8).Unit(unit).
		Targets(queries(false, ts)).
		DrawStyle(common.GraphDrawStyleLine).LineWidth(1).FillOpacity(10).ShowPoints(common.VisibilityModeNever).
		SpanNulls(common.BoolOrFloat64{Bool: cog.ToPtr(false)}).
		Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).ShowLegend(true)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}

// bars is a horizontal bar gauge w columns wide, 8 rows high, of instant
// queries over the dashboard's range: one bar per series, its last value.
func bars(title, description, unit string, w uint32, ts ...target) *bargauge.PanelBuilder {
	return bargauge.NewPanelBuilder().Title(title).Description(description).Datasource(datasource()).
		Span(w).Height(8).Unit(unit).
		Targets(queries(true, ts)).
		Orientation(common.VizOrientationHorizontal).DisplayMode(common.BarGaugeDisplayModeBasic).ShowUnfilled(true).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Fields("").Values(false))
}

// board is a herdbench dashboard: read-only (provisioned), refreshed every
// 5 s over the last 15 minutes, with the $datasource and $arm variables and
// T, each arm's phases and its verdict marked on every panel.
func board(uid, title, description string) *dashboard.DashboardBuilder {
	return courseAnnotations(dashboard.NewDashboardBuilder(title).Uid(uid).Description(description).Tags([]string{"herdbench"}).
		Readonly().Tooltip(dashboard.DashboardCursorSyncCrosshair).Timezone("browser").Refresh("5s").
		Time("now-15m", "now").FiscalYearStartMonth(0).LiveNow(false).WeekStart("").
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus").
			Current(dashboard.VariableOption{Selected: cog.ToPtr(false),
				Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr("Prometheus")},
				Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(DatasourceUID)}})).
		WithVariable(labelVariable("arm", "Arm", "herdbench_requests_total", "arm")).
		Annotation(dashboard.NewAnnotationQueryBuilder().Name("Annotations & Alerts").BuiltIn(1).Type("dashboard").
			Datasource(common.DataSourceRef{Type: cog.ToPtr("grafana"), Uid: cog.ToPtr("-- Grafana --")}).
			Enable(true).Hide(true).IconColor("rgba(0, 211, 255, 1)")).
		Annotation(dashboard.NewAnnotationQueryBuilder().Name("Trigger (T)").Datasource(datasource()).
			Enable(true).Hide(false).IconColor("red").
			Expr(`max by (arm) (herdbench_trigger_timestamp_seconds{arm=~"$arm"}) * 1000`).UseValueForTime(true).Step("1s").
			TitleFormat("T: trigger fired").TextFormat("arm {{arm}}").TagKeys("arm")))
}

// labelVariable is a multi-value variable of label's values on metric,
// All selecting every value, refreshed with the time range.
func labelVariable(name, label, metric, labelName string) *dashboard.QueryVariableBuilder {
	query := "label_values(" + metric + ", " + labelName + ")"
	return dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(datasource()).
		Definition(query).Query(dashboard.StringOrMap{Map: map[string]any{"query": query, "refId": name}}).
		Multi(true).IncludeAll(true).AllValue(".*").
		Current(dashboard.VariableOption{Selected: cog.ToPtr(true),
			Text:  dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
			Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}}}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortDisabled)
}
