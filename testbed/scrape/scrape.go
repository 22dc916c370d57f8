// Package scrape holds what Prometheus needs to watch the testbed, for both
// providers: the scrape config (prometheus.yml, mounted as it is by docker
// compose) and the postgres exporter's queries (postgres-exporter.yml). The
// local provider renders the same config with its own ports, so the jobs,
// intervals and labels a dashboard relies on are the same under both.
//
// Guarantee: Render changes only the targets of the jobs named here;
// everything else in the committed file is kept.
package scrape

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the committed Prometheus config, with docker compose's targets.
//
//go:embed prometheus.yml
var Config []byte

// PostgresQueries are prometheus-postgres-exporter's custom queries
// (--extend.query-path): pg_stat_statements calls of the item query and the
// app's connections.
//
//go:embed postgres-exporter.yml
var PostgresQueries []byte

// The jobs of the config; dashboards select on them.
const (
	JobAPI        = "herdbench-api" // the replicas, each labelled replica="api-N"
	JobHarness    = "herdbench"     // a stampede's live metrics
	JobRedis      = "redis"         // prometheus-redis-exporter
	JobPostgres   = "postgres"      // prometheus-postgres-exporter
	JobPrometheus = "prometheus"    // Prometheus itself
)

// Jobs lists every job, in the config's order.
var Jobs = []string{JobAPI, JobHarness, JobRedis, JobPostgres, JobPrometheus}

// Targets are the host:port addresses Prometheus scrapes.
type Targets struct {
	API        []string // the replicas in order: api-1, api-2, ...
	Harness    string
	Redis      string // the redis exporter
	Postgres   string // the postgres exporter
	Prometheus string
}

// byJob returns the targets of each job as Prometheus static configs.
func (t Targets) byJob() map[string][]staticConfig {
	one := func(addr string) []staticConfig { return []staticConfig{{Targets: []string{addr}}} }
	api := make([]staticConfig, len(t.API))
	for i, addr := range t.API {
		api[i] = staticConfig{Targets: []string{addr}, Labels: map[string]string{"replica": fmt.Sprintf("api-%d", i+1)}}
	}
	return map[string][]staticConfig{
		JobAPI: api, JobHarness: one(t.Harness), JobRedis: one(t.Redis),
		JobPostgres: one(t.Postgres), JobPrometheus: one(t.Prometheus),
	}
}

type staticConfig struct {
	Targets []string          `yaml:"targets"`
	Labels  map[string]string `yaml:"labels,omitempty"`
}

// Committed returns the targets of the committed config: docker compose's
// published ports.
func Committed() (Targets, error) {
	doc, err := parse(Config)
	if err != nil {
		return Targets{}, err
	}
	var t Targets
	var errs []error
	single := map[string]*string{JobHarness: &t.Harness, JobRedis: &t.Redis, JobPostgres: &t.Postgres, JobPrometheus: &t.Prometheus}
	for _, job := range Jobs {
		var scs []staticConfig
		if err := job2node(doc, job).Decode(&scs); err != nil {
			errs = append(errs, fmt.Errorf("prometheus.yml: job %s: static_configs: %w", job, err))
			continue
		}
		var addrs []string
		for _, sc := range scs {
			addrs = append(addrs, sc.Targets...)
		}
		if job == JobAPI {
			t.API = addrs
			continue
		}
		if len(addrs) != 1 {
			errs = append(errs, fmt.Errorf("prometheus.yml: job %s: %d targets; want 1", job, len(addrs)))
			continue
		}
		*single[job] = addrs[0]
	}
	return t, errors.Join(errs...)
}

// Render returns the committed config scraping t instead of compose's
// ports. Every target must be set.
func Render(t Targets) ([]byte, error) {
	var missing []string
	if len(t.API) == 0 || slices.Contains(t.API, "") {
		missing = append(missing, "api")
	}
	for name, v := range map[string]string{"harness": t.Harness, "redis": t.Redis, "postgres": t.Postgres, "prometheus": t.Prometheus} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("scrape targets: %s not set", strings.Join(missing, ", "))
	}
	doc, err := parse(Config)
	if err != nil {
		return nil, err
	}
	for job, scs := range t.byJob() {
		var n yaml.Node
		if err := n.Encode(scs); err != nil {
			return nil, err
		}
		*job2node(doc, job) = n
	}
	return yaml.Marshal(doc)
}

// parse reads the config and checks that every job has static_configs.
func parse(b []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("prometheus.yml: %w", err)
	}
	var errs []error
	for _, job := range Jobs {
		if job2node(&doc, job) == nil {
			errs = append(errs, fmt.Errorf("prometheus.yml: no job %s with static_configs", job))
		}
	}
	return &doc, errors.Join(errs...)
}

// job2node finds the static_configs value of job in the config, or nil.
func job2node(doc *yaml.Node, job string) *yaml.Node {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	configs := mapValue(root, "scrape_configs")
	if configs == nil || configs.Kind != yaml.SequenceNode {
		return nil
	}
	for _, sc := range configs.Content {
		if name := mapValue(sc, "job_name"); name != nil && name.Value == job {
			return mapValue(sc, "static_configs")
		}
	}
	return nil
}

// mapValue returns the value under key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
