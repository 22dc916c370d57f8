package grafana

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	sdk "github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/herdbench/herdbench/livemetrics"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/scrape"
)

// The repository's grafana/ is what herdbench dashboards writes, byte for
// byte, and dashboards/ holds nothing else.
func TestTheCommittedFilesAreGenerated(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("grafana/%s differs from what herdbench dashboards writes (%v): run go generate ./grafana", name, err)
		}
	}
	committed, _ := filepath.Glob("dashboards/*")
	for _, name := range committed {
		if _, ok := files[name]; !ok {
			t.Errorf("grafana/%s is not generated: dashboards are Go code (grafana/*.go)", name)
		}
	}
}

// strictDashboard decodes b as Grafana's dashboard kind would: strictly
// (required fields, types, no unknown field), with the panel and query
// plugins registered, then validated. It returns the panels apart: v0.0.22
// decodes each panel strictly inside the dashboard and reports its errors,
// but its decoders return an empty error list as a non-nil error, which
// its PanelOrRowPanel takes for a failure: it keeps no panel, so each is
// decoded again here.
func strictDashboard(b []byte) (sdk.Dashboard, []sdk.Panel, error) {
	plugins.RegisterDefaultPlugins()
	var d sdk.Dashboard
	if err := sdkError(d.UnmarshalJSONStrict(b)); err != nil {
		return d, nil, err
	}
	if err := sdkError(d.Validate()); err != nil {
		return d, nil, err
	}
	var raw struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return d, nil, err
	}
	var panels []sdk.Panel
	for i, r := range raw.Panels {
		var p sdk.Panel
		if err := sdkError(p.UnmarshalJSONStrict(r)); err != nil {
			return d, nil, fmt.Errorf("panels[%d]: %w", i, err)
		}
		// the same empty error list drops the strictly decoded options and
		// queries (their errors are reported above): the plain decoder,
		// through the same plugins, keeps them
		p = sdk.Panel{}
		if err := json.Unmarshal(r, &p); err != nil {
			return d, nil, fmt.Errorf("panels[%d]: %w", i, err)
		}
		if err := sdkError(p.Validate()); err != nil {
			return d, nil, fmt.Errorf("panels[%d]: %w", i, err)
		}
		panels = append(panels, p)
	}
	return d, panels, nil
}

// sdkError is err, nil when it is the SDK's empty list of errors (its
// decoders return their cog.BuildErrors as an error even when empty).
func sdkError(err error) error {
	if be, ok := err.(cog.BuildErrors); ok && len(be) == 0 {
		return nil
	}
	return err
}

func TestDashboardsDecodeStrictlyAndValidate(t *testing.T) {
	files, _ := filepath.Glob("dashboards/*.json")
	if len(files) < 2 {
		t.Fatalf("dashboards: %v; want the overview and the mitigations", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, panels, err := strictDashboard(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(panels) != len(d.Panels) || len(panels) == 0 {
			t.Errorf("%s: %d panels decoded of %d", f, len(panels), len(d.Panels))
		}
		for _, p := range panels {
			title := ""
			if p.Title != nil {
				title = *p.Title
			}
			// the plugins' own decoders read the options, not a loose map
			switch p.Options.(type) {
			case *timeseries.Options, *bargauge.Options:
			default:
				t.Errorf("%s: panel %q (%s): options decoded as %T; want the plugin's own type", f, title, p.Type, p.Options)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", f, title)
			}
			for i, q := range p.Targets {
				pq, ok := q.(*prometheus.Dataquery)
				if !ok {
					t.Errorf("%s: panel %q target %d decoded as %T; want a Prometheus query", f, title, i, q)
					continue
				}
				if pq.Datasource == nil || *pq.Datasource.Uid != "${datasource}" || *pq.Datasource.Type != "prometheus" {
					t.Errorf("%s: panel %q target %d datasource %+v; want the $datasource variable's Prometheus", f, title, i, pq.Datasource)
				}
			}
		}
	}
}

// The strict decoding refuses what Grafana's kind does not have, so the
// test above can fail.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	b, err := os.ReadFile("dashboards/herd-overview.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, mistake := range map[string][2]string{
		"an unknown panel field": {`"transparent": false`, `"transparent": false, "colour": "red"`},
		"a wrong type":           {`"transparent": false`, `"transparent": "no"`},
		"an unknown query field": {`"legendFormat"`, `"legend": "x", "legendFormat"`},
		"a panel option unknown": {`"showLegend": true`, `"showLegend": true, "shown": 1`},
	} {
		if !bytes.Contains(b, []byte(mistake[0])) {
			t.Fatalf("%s: %q not in the overview", name, mistake[0])
		}
		if _, _, err := strictDashboard(bytes.Replace(b, []byte(mistake[0]), []byte(mistake[1]), 1)); err == nil {
			t.Errorf("%s: strict decoding accepted it", name)
		}
	}
}

// exported is a metric's sample name and the labels its series carry.
type exported map[string][]string

// add adds a family's sample names (a histogram's _bucket, _sum and
// _count) with its labels and those Prometheus adds to its job's.
func (e exported) add(name, typ string, labels []string, job string) {
	labels = append(slices.Clone(labels), "job", "instance")
	labels = append(labels, jobLabels[job]...)
	names := []string{name}
	if typ == "histogram" {
		names = []string{name + "_bucket", name + "_sum", name + "_count"}
		labels = append(labels, "le")
	}
	for _, n := range names {
		e[n] = append(e[n], labels...)
	}
}

// jobLabels are the labels the scrape config adds to a job's series.
var jobLabels = map[string][]string{}

func init() {
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(scrape.Config, &cfg); err != nil {
		panic(err)
	}
	for _, j := range cfg.ScrapeConfigs {
		for _, s := range j.StaticConfigs {
			for l := range s.Labels {
				jobLabels[j.JobName] = append(jobLabels[j.JobName], l)
			}
		}
	}
}

// redisExporterMetrics are the redis exporter's series the dashboards
// read: herdbench does not declare them (the exporter is not its code);
// TestDashboardsShowALiveStampede checks them against its real output.
var redisExporterMetrics = []string{"redis_keyspace_hits_total", "redis_keyspace_misses_total", "redis_connected_clients",
	"redis_connections_received_total"}

// herdbenchMetrics are the series herdbench exports, from where they are
// registered: the harness' families (livemetrics.Families), a replica's
// registry (api.MetricFamilies, every mitigation's counters and both
// databases' pools), the postgres exporter's queries herdbench writes
// (testbed/scrape), and the redis exporter's few.
func herdbenchMetrics(t *testing.T) exported {
	t.Helper()
	e := exported{}
	for _, f := range livemetrics.Families() {
		e.add(f.Name, f.Type, f.Labels, scrape.JobHarness)
	}
	for _, db := range []string{replica.DBPostgres, replica.DBMariaDB} {
		mfs, err := api.MetricFamilies(replica.DefaultMitigations(), db)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			var labels []string
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName())
				}
			}
			typ := "other"
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				typ = "histogram"
			}
			e.add(mf.GetName(), typ, labels, scrape.JobAPI)
		}
	}
	var queries map[string]struct {
		Metrics []map[string]struct {
			Usage string `yaml:"usage"`
		} `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(scrape.PostgresQueries, &queries); err != nil {
		t.Fatal(err)
	}
	for ns, q := range queries {
		var labels []string
		for _, m := range q.Metrics {
			for col, c := range m {
				if c.Usage == "LABEL" {
					labels = append(labels, col)
				}
			}
		}
		for _, m := range q.Metrics {
			for col, c := range m {
				if c.Usage != "LABEL" {
					e.add(ns+"_"+col, "other", labels, scrape.JobPostgres)
				}
			}
		}
	}
	for _, n := range redisExporterMetrics {
		e.add(n, "other", nil, scrape.JobRedis)
	}
	return e
}

// selectors are the vector selectors of expr: each metric and the labels
// its matchers name.
func selectors(expr string) (map[string][]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name != "__name__" {
					out[vs.Name] = append(out[vs.Name], m.Name)
				}
			}
			if _, ok := out[vs.Name]; !ok {
				out[vs.Name] = nil
			}
		}
		return nil
	})
	return out, nil
}

// Every query, annotation and variable selects series herdbench exports,
// by labels those series carry.
func TestEveryMetricIsOneHerdbenchExports(t *testing.T) {
	known := herdbenchMetrics(t)
	vars := grafanaVars(15 * time.Minute)
	n := 0
	for _, d := range loadDashboards(t) {
		for _, q := range d.queries() {
			e, err := expand(q.expr, vars)
			if err != nil {
				t.Errorf("%s: %v", q.where, err)
				continue
			}
			sels, err := selectors(e)
			if err != nil {
				t.Errorf("%s: %v", q.where, err)
				continue
			}
			for metric, labels := range sels {
				n++
				have, ok := known[metric]
				if !ok {
					t.Errorf("%s: metric %s is not one herdbench exports", q.where, metric)
					continue
				}
				for _, l := range labels {
					if !slices.Contains(have, l) {
						t.Errorf("%s: %s has no label %q (its labels: %v)", q.where, metric, l, slices.Compact(slices.Sorted(slices.Values(have))))
					}
				}
			}
		}
		for name, v := range d.variableQueries() {
			if have, ok := known[v[0]]; !ok || !slices.Contains(have, v[1]) {
				t.Errorf("%s: variable $%s: label_values(%s, %s) names no exported series' label", d.file, name, v[0], v[1])
			}
		}
	}
	if n < 20 {
		t.Errorf("checked %d selectors; want every query's", n)
	}
	// the check can fail
	if _, ok := known["herdbench_requests_totals"]; ok {
		t.Errorf("a misspelt metric is known")
	}
}

// Every $variable a query or annotation names is one of the dashboard's
// or one Grafana sets itself; every variable's data source is $datasource.
func TestEveryVariableResolves(t *testing.T) {
	builtin := []string{"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s"}
	for _, d := range loadDashboards(t) {
		defined := slices.Clone(builtin)
		for _, v := range d.Templating.List {
			defined = append(defined, v.Name)
		}
		var uses []string
		for _, q := range d.queries() {
			for _, m := range varRE.FindAllStringSubmatch(q.expr, -1) {
				uses = append(uses, m[1])
				if !slices.Contains(defined, m[1]) {
					t.Errorf("%s: $%s is no variable of the dashboard's (%v)", q.where, m[1], defined)
				}
			}
		}
		for _, v := range d.Templating.List {
			if v.Type == "query" && !slices.Contains(uses, v.Name) {
				t.Errorf("%s: variable $%s is used by no query", d.file, v.Name)
			}
		}
		b, _ := json.Marshal(d.raw["panels"])
		if !strings.Contains(string(b), "${datasource}") {
			t.Errorf("%s: no panel reads $datasource", d.file)
		}
	}
}
