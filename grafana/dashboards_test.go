package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/herdbench/herdbench/testbed/scrape"
)

// datasourceUID is the provisioned Prometheus datasource's uid.
const datasourceUID = "herdbench-prometheus"

// dashJSON is the part of a classic dashboard JSON the tests read.
type dashJSON struct {
	file        string
	raw         map[string]any
	UID         string `json:"uid"`
	Title       string `json:"title"`
	Annotations struct {
		List []struct {
			Name            string         `json:"name"`
			Datasource      map[string]any `json:"datasource"`
			Expr            string         `json:"expr"`
			UseValueForTime bool           `json:"useValueForTime"`
		} `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Name       string         `json:"name"`
			Type       string         `json:"type"`
			Query      any            `json:"query"`
			Datasource map[string]any `json:"datasource"`
			Current    struct {
				Value any `json:"value"`
			} `json:"current"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Type        string         `json:"type"`
	Datasource  map[string]any `json:"datasource"`
	Targets     []struct {
		RefID      string         `json:"refId"`
		Expr       string         `json:"expr"`
		Instant    bool           `json:"instant"`
		Datasource map[string]any `json:"datasource"`
	} `json:"targets"`
}

func loadDashboards(t testing.TB) []dashJSON {
	t.Helper()
	files, err := filepath.Glob("dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in grafana/dashboards: %v", err)
	}
	var out []dashJSON
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := dashJSON{file: f}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := json.Unmarshal(b, &d.raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, d)
	}
	return out
}

// query is one PromQL expression of a dashboard.
type query struct {
	where   string // file, panel and refId, for messages
	expr    string
	instant bool
}

// queries lists every panel target and PromQL annotation of d.
func (d dashJSON) queries() []query {
	var qs []query
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			qs = append(qs, query{fmt.Sprintf("%s: panel %q target %s", d.file, p.Title, tg.RefID), tg.Expr, tg.Instant})
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			qs = append(qs, query{fmt.Sprintf("%s: annotation %q", d.file, a.Name), a.Expr, false})
		}
	}
	return qs
}

// variableQueries are the label_values(METRIC, LABEL) queries of d's
// template variables.
func (d dashJSON) variableQueries() map[string][2]string {
	out := map[string][2]string{}
	re := regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		m := re.FindStringSubmatch(s)
		if m == nil {
			out[v.Name] = [2]string{"", s}
			continue
		}
		out[v.Name] = [2]string{m[1], m[2]}
	}
	return out
}

// grafanaVars is what Grafana substitutes for its variables, given the
// dashboard's time range: $__rate_interval is at least four scrapes of the
// datasource's 1s timeInterval; $arm (multi-value, All is .*) selects every
// arm.
func grafanaVars(rng time.Duration) map[string]string {
	return map[string]string{
		"__rate_interval": "4s",
		"__interval":      "1s",
		"__interval_ms":   "1000",
		"__range":         fmt.Sprintf("%ds", int(rng.Seconds())),
		"__range_s":       fmt.Sprint(int(rng.Seconds())),
		"arm":             ".*",
	}
}

var varRE = regexp.MustCompile(`\$\{?(\w+)\}?`)

// expand substitutes Grafana's variables; an unknown one is an error.
func expand(expr string, vars map[string]string) (string, error) {
	var unknown []string
	out := varRE.ReplaceAllStringFunc(expr, func(m string) string {
		name := varRE.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			unknown = append(unknown, m)
			return m
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown Grafana variables %v", unknown)
	}
	return out, nil
}

// metricNames parses expr and returns the metrics it selects.
func metricNames(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	slices.Sort(names)
	return slices.Compact(names), nil
}

func TestEveryQueryParses(t *testing.T) {
	vars := grafanaVars(15 * time.Minute)
	n := 0
	for _, d := range loadDashboards(t) {
		for _, q := range d.queries() {
			n++
			e, err := expand(q.expr, vars)
			if err != nil {
				t.Errorf("%s: %v", q.where, err)
				continue
			}
			names, err := metricNames(e)
			if err != nil {
				t.Errorf("%s: %q does not parse: %v", q.where, e, err)
				continue
			}
			if len(names) == 0 || slices.Contains(names, "") {
				t.Errorf("%s: %q selects no metric by name (%v)", q.where, e, names)
			}
		}
		for name, v := range d.variableQueries() {
			if v[0] == "" {
				t.Errorf("%s: variable $%s: query %q is not label_values(METRIC, LABEL)", d.file, name, v[1])
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d queries in the dashboards; want the panels' and annotations' (at least 10)", n)
	}
}

// The parser and the expansion catch what they should, so the test above
// can fail.
func TestQueryChecksCatchMistakes(t *testing.T) {
	if _, err := expand(`rate(x[$__rate_intervall])`, grafanaVars(time.Minute)); err == nil {
		t.Errorf("expand of a misspelt variable = nil error; want unknown variable")
	}
	if _, err := metricNames(`sum(rate(herdbench_requests_total[4s])`); err == nil {
		t.Errorf("metricNames of unbalanced parentheses = nil error; want a parse error")
	}
	got, err := metricNames(`sum(rate(a_total[4s])) / sum(rate(b_total{x="y"}[4s])) * on() group_left(arm) (max by (arm) (a_total) == 1)`)
	if want := []string{"a_total", "b_total"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("metricNames = %v, %v; want %v", got, err, want)
	}
}

func TestDashboardsAreClassicAndProvisionable(t *testing.T) {
	ds := loadDashboards(t)
	titles := map[string]bool{}
	uids := map[string]string{}
	for _, d := range ds {
		titles[d.Title] = true
		if d.UID == "" || d.Title == "" {
			t.Errorf("%s: uid %q, title %q; want both set (provisioned dashboards keep their uid)", d.file, d.UID, d.Title)
		}
		if other, dup := uids[d.UID]; dup {
			t.Errorf("%s: uid %q also in %s", d.file, d.UID, other)
		}
		uids[d.UID] = d.file
		// an export "for sharing externally" carries __inputs and
		// ${DS_...} placeholders, which provisioning does not fill in
		if _, ok := d.raw["__inputs"]; ok {
			t.Errorf("%s has __inputs: export without 'share externally' for provisioning", d.file)
		}
		if b, _ := os.ReadFile(d.file); strings.Contains(string(b), "${DS_") {
			t.Errorf("%s refers to a ${DS_...} input", d.file)
		}
		var dsVar bool
		for _, v := range d.Templating.List {
			if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" && v.Current.Value == datasourceUID {
				dsVar = true
			}
			if v.Type == "query" && v.Datasource["uid"] != "${datasource}" {
				t.Errorf("%s: variable $%s uses datasource %v; want ${datasource}", d.file, v.Name, v.Datasource)
			}
		}
		if !dsVar {
			t.Errorf("%s: no $datasource variable of type datasource (prometheus) defaulting to %s", d.file, datasourceUID)
		}
		for _, p := range d.Panels {
			if p.Datasource["uid"] != "${datasource}" {
				t.Errorf("%s: panel %q datasource %v; want ${datasource}", d.file, p.Title, p.Datasource)
			}
			if p.Description == "" {
				t.Errorf("%s: panel %q has no description (docs/dashboards.md describes panels from them)", d.file, p.Title)
			}
			for _, tg := range p.Targets {
				if tg.Datasource["uid"] != "${datasource}" {
					t.Errorf("%s: panel %q target %s datasource %v; want ${datasource}", d.file, p.Title, tg.RefID, tg.Datasource)
				}
			}
		}
		var marked bool
		for _, a := range d.Annotations.List {
			if strings.Contains(a.Expr, "herdbench_trigger_timestamp_seconds") && a.UseValueForTime && strings.Contains(a.Expr, "* 1000") &&
				a.Datasource["uid"] == "${datasource}" {
				marked = true
			}
		}
		if !marked {
			t.Errorf("%s: no annotation marking T from herdbench_trigger_timestamp_seconds (series value as time, in ms)", d.file)
		}
	}
	for _, want := range []string{"Herd overview", "Mitigations"} {
		if !titles[want] {
			t.Errorf("no dashboard titled %q (have %v)", want, titles)
		}
	}
	// the overview shows what the issue asks for
	for _, d := range ds {
		if d.Title != "Herd overview" {
			continue
		}
		var all []string
		for _, p := range d.Panels {
			all = append(all, strings.ToLower(p.Title))
		}
		joined := strings.Join(all, " | ")
		for _, want := range []string{"db queries/s", "p99", "drop rate", "cache hit ratio", "connections", "retries"} {
			if !strings.Contains(joined, want) {
				t.Errorf("Herd overview panels %q: none about %q", joined, want)
			}
		}
	}
}

func TestProvisioningMatchesTheScrapeConfig(t *testing.T) {
	var dsf struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, UID, Type, URL, Access string
			IsDefault                    bool           `yaml:"isDefault"`
			Editable                     bool           `yaml:"editable"`
			JSONData                     map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, "provisioning/datasources/prometheus.yml", &dsf)
	targets, err := scrape.Committed()
	if err != nil {
		t.Fatal(err)
	}
	var scrapeCfg struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
	}
	if err := yaml.Unmarshal(scrape.Config, &scrapeCfg); err != nil {
		t.Fatal(err)
	}
	if len(dsf.Datasources) != 1 {
		t.Fatalf("datasources = %d; want 1", len(dsf.Datasources))
	}
	d := dsf.Datasources[0]
	if dsf.APIVersion != 1 || d.UID != datasourceUID || d.Type != "prometheus" || d.URL != "http://"+targets.Prometheus || d.Editable {
		t.Errorf("datasource = apiVersion %d, %+v; want uid %s, type prometheus, url http://%s (the scrape config's own target)",
			dsf.APIVersion, d, datasourceUID, targets.Prometheus)
	}
	if d.JSONData["timeInterval"] != scrapeCfg.Global.ScrapeInterval {
		t.Errorf("datasource timeInterval = %v; want the scrape interval %s, which $__rate_interval derives from",
			d.JSONData["timeInterval"], scrapeCfg.Global.ScrapeInterval)
	}
	var prov struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name, Type, Folder    string
			OrgID                 int  `yaml:"orgId"`
			DisableDeletion       bool `yaml:"disableDeletion"`
			AllowUIUpdates        bool `yaml:"allowUiUpdates"`
			UpdateIntervalSeconds int  `yaml:"updateIntervalSeconds"`
			Options               struct {
				Path                      string `yaml:"path"`
				FoldersFromFilesStructure bool   `yaml:"foldersFromFilesStructure"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "provisioning/dashboards/herdbench.yml", &prov)
	if prov.APIVersion != 1 || len(prov.Providers) != 1 || prov.Providers[0].Type != "file" || prov.Providers[0].Options.Path == "" ||
		prov.Providers[0].AllowUIUpdates {
		t.Errorf("dashboard providers = %+v; want one read-only file provider with a path", prov)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
