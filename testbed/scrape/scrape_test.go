package scrape

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
)

func TestCommittedTargetsAreComposesLoopbackPorts(t *testing.T) {
	got, err := Committed()
	if err != nil {
		t.Fatal(err)
	}
	want := Targets{
		API:     []string{"127.0.0.1:18081", "127.0.0.1:18082", "127.0.0.1:18083"},
		Harness: "127.0.0.1:19465", Redis: "127.0.0.1:19121", Postgres: "127.0.0.1:19187", Prometheus: "127.0.0.1:19090",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Committed() = %+v; want %+v", got, want)
	}
}

func TestRenderChangesOnlyTheTargets(t *testing.T) {
	in := Targets{
		API:     []string{"127.0.0.1:1001", "127.0.0.1:1002"},
		Harness: "127.0.0.1:1100", Redis: "127.0.0.1:1200", Postgres: "127.0.0.1:1300", Prometheus: "127.0.0.1:1400",
	}
	out, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	var rendered, committed map[string]any
	if err := yaml.Unmarshal(out, &rendered); err != nil {
		t.Fatalf("rendered config does not parse: %v\n%s", err, out)
	}
	if err := yaml.Unmarshal(Config, &committed); err != nil {
		t.Fatal(err)
	}
	// the targets are the ones asked for, each replica labelled
	doc, err := parse(out)
	if err != nil {
		t.Fatal(err)
	}
	var api []staticConfig
	if err := job2node(doc, JobAPI).Decode(&api); err != nil {
		t.Fatal(err)
	}
	wantAPI := []staticConfig{
		{Targets: []string{"127.0.0.1:1001"}, Labels: map[string]string{"replica": "api-1"}},
		{Targets: []string{"127.0.0.1:1002"}, Labels: map[string]string{"replica": "api-2"}},
	}
	if !reflect.DeepEqual(api, wantAPI) {
		t.Errorf("rendered %s static_configs = %+v; want %+v", JobAPI, api, wantAPI)
	}
	for job, addr := range map[string]string{JobHarness: in.Harness, JobRedis: in.Redis, JobPostgres: in.Postgres, JobPrometheus: in.Prometheus} {
		var scs []staticConfig
		if err := job2node(doc, job).Decode(&scs); err != nil || len(scs) != 1 || !reflect.DeepEqual(scs[0].Targets, []string{addr}) {
			t.Errorf("rendered job %s = %+v, %v; want the one target %s", job, scs, err, addr)
		}
	}
	// everything but the static configs is the committed file's
	strip := func(cfg map[string]any) {
		for _, sc := range cfg["scrape_configs"].([]any) {
			delete(sc.(map[string]any), "static_configs")
		}
	}
	strip(rendered)
	strip(committed)
	if !reflect.DeepEqual(rendered, committed) {
		t.Errorf("rendered config without its targets = %v; want the committed %v", rendered, committed)
	}
}

func TestRenderNamesMissingTargets(t *testing.T) {
	_, err := Render(Targets{API: []string{"127.0.0.1:1"}, Redis: "127.0.0.1:2"})
	if err == nil || !strings.Contains(err.Error(), "harness, postgres, prometheus not set") {
		t.Errorf("Render without harness, postgres and prometheus = %v; want an error naming them", err)
	}
}

func TestCommittedTargetsAreLoopback(t *testing.T) {
	c, err := Committed()
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range append([]string{c.Harness, c.Redis, c.Postgres, c.Prometheus}, c.API...) {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("target %q is not on loopback", addr)
		}
	}
}

// promtool, Prometheus' own checker, accepts the committed and the rendered
// config.
func TestPromtoolAcceptsTheConfigs(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and promtool is missing: install it with `apt-get install prometheus`")
		}
		t.Skip("promtool missing (apt-get install prometheus)")
	}
	rendered, err := Render(Targets{API: []string{"127.0.0.1:1001"}, Harness: "127.0.0.1:1100", Redis: "127.0.0.1:1200",
		Postgres: "127.0.0.1:1300", Prometheus: "127.0.0.1:1400"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"committed.yml": Config, "rendered.yml": rendered} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(promtool, "check", "config", path).CombinedOutput(); err != nil {
			t.Errorf("promtool check config %s: %v\n%s", name, err, out)
		}
	}
}

// The exporter counts what the stampede counts: the item query's calls by
// the app's role.
func TestPostgresQueriesCountTheItemQuery(t *testing.T) {
	var queries map[string]struct {
		Query   string                         `yaml:"query"`
		Metrics []map[string]map[string]string `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(PostgresQueries, &queries); err != nil {
		t.Fatal(err)
	}
	item, ok := queries["pg_stat_statements_item"]
	if !ok {
		t.Fatalf("postgres-exporter.yml has no pg_stat_statements_item query")
	}
	for _, want := range []string{"'" + api.ItemQuery + "'", "'" + testbed.AppRole + "'", "pg_stat_statements"} {
		if !strings.Contains(item.Query, want) {
			t.Errorf("pg_stat_statements_item query lacks %s:\n%s", want, item.Query)
		}
	}
	if u := item.Metrics[0]["calls_total"]["usage"]; u != "COUNTER" {
		t.Errorf("calls_total usage = %q; want COUNTER", u)
	}
	if !strings.Contains(queries["pg_stat_activity_app"].Query, "'"+testbed.AppRole+"'") {
		t.Errorf("pg_stat_activity_app does not select the app role %s", testbed.AppRole)
	}
}
