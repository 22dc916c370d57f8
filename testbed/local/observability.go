package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/testbed/scrape"
)

// obsBinaries are the programs observability runs: Debian's packages, or
// the upstream names Homebrew and release tarballs use.
type obsBinaries struct {
	prometheus, redisExporter, postgresExporter string
}

// obsPrograms says where each observability program may be found and which
// package provides it.
var obsPrograms = []struct {
	names            []string // on PATH, Debian's first
	debian, homebrew string
}{
	{[]string{"prometheus"}, "prometheus", "prometheus"},
	{[]string{"prometheus-redis-exporter", "redis_exporter"}, "prometheus-redis-exporter", "redis_exporter"},
	{[]string{"prometheus-postgres-exporter", "postgres_exporter"}, "prometheus-postgres-exporter", "postgres_exporter"},
}

// CheckObservabilityBinaries reports whether the programs that
// Config.Observability runs are installed (prometheus and its Redis and
// Postgres exporters), naming the packages that provide any that are
// missing.
func CheckObservabilityBinaries() error {
	_, err := findObservability()
	return err
}

func findObservability() (obsBinaries, error) {
	var found []string
	var errs []error
	for _, p := range obsPrograms {
		path := ""
		for _, name := range p.names {
			if lp, err := exec.LookPath(name); err == nil {
				path = lp
				break
			}
		}
		if path == "" {
			errs = append(errs, &MissingBinaryError{Program: strings.Join(p.names, " or "), Searched: "PATH", Debian: p.debian, Homebrew: p.homebrew})
		}
		found = append(found, path)
	}
	return obsBinaries{prometheus: found[0], redisExporter: found[1], postgresExporter: found[2]}, errors.Join(errs...)
}

// startObservability starts the Redis and Postgres exporters and a
// Prometheus that scrapes them, the replicas and the harness, with the
// committed scrape config rendered for ports. All three are children of the
// supervisor, like every other part.
func (tb *Testbed) startObservability(ctx context.Context, ports Ports) error {
	dir := filepath.Join(tb.cfg.StateDir, "prometheus")
	if err := mkdirEmpty(dir, 0o755); err != nil {
		return &PartError{Part: "prometheus", Err: err}
	}
	queries := filepath.Join(dir, "postgres-exporter.yml")
	if err := os.WriteFile(queries, scrape.PostgresQueries, 0o644); err != nil {
		return &PartError{Part: "postgres-exporter", Err: err}
	}
	addr := func(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
	env, err := exec.LookPath("env")
	if err != nil {
		return &PartError{Part: "postgres-exporter", Err: err}
	}
	exporters := []struct {
		name string
		port int
		argv []string
	}{
		{"redis-exporter", ports.RedisExporter, []string{tb.bins.obs.redisExporter,
			"-redis.addr", tb.status.Redis, "-web.listen-address", addr(ports.RedisExporter)}},
		// the exporter takes its DSN from the environment only
		{"postgres-exporter", ports.PostgresExporter, []string{env, "DATA_SOURCE_NAME=" + tb.status.Postgres,
			tb.bins.obs.postgresExporter, "--extend.query-path=" + queries, "--disable-settings-metrics",
			"--web.listen-address=" + addr(ports.PostgresExporter)}},
	}
	for _, e := range exporters {
		p, err := tb.spawn(ctx, e.name, syscall.SIGTERM, nil, e.argv...)
		if err != nil {
			return &PartError{Part: e.name, Err: err}
		}
		metrics := "http://" + addr(e.port) + "/metrics"
		p.ready = httpOK(metrics, "GET "+metrics)
		if err := tb.waitReady(ctx, p, p.ready); err != nil {
			return &PartError{Part: e.name, Log: p.log, Err: err}
		}
	}

	targets := scrape.Targets{Harness: addr(ports.Harness), Redis: addr(ports.RedisExporter),
		Postgres: addr(ports.PostgresExporter), Prometheus: addr(ports.Prometheus)}
	for _, u := range tb.status.API {
		targets.API = append(targets.API, strings.TrimPrefix(u, "http://"))
	}
	cfg, err := scrape.Render(targets)
	if err != nil {
		return &PartError{Part: "prometheus", Err: err}
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		return &PartError{Part: "prometheus", Err: err}
	}
	url := "http://" + addr(ports.Prometheus)
	p, err := tb.spawn(ctx, "prometheus", syscall.SIGTERM, nil, tb.bins.obs.prometheus,
		"--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr(ports.Prometheus), "--storage.tsdb.retention.time=1d")
	if err != nil {
		return &PartError{Part: "prometheus", Err: err}
	}
	p.ready = httpOK(url+"/-/ready", "GET "+url+"/-/ready")
	if err := tb.waitReady(ctx, p, p.ready); err != nil {
		return &PartError{Part: "prometheus", Log: p.log, Err: err}
	}
	// Prometheus hands discovered targets to its scrapers every 5 s: until
	// then it is ready but scrapes nothing
	want := len(targets.API) + len(scrape.Jobs) - 1
	if err := tb.waitReady(ctx, p, scraping(url, want)); err != nil {
		return &PartError{Part: "prometheus", Log: p.log, Err: err}
	}
	tb.mu.Lock()
	tb.status.Prometheus = url
	tb.status.Harness = targets.Harness
	if v := prometheusVersion(ctx, url); v != "" {
		tb.status.Versions["prometheus"] = v
	}
	tb.mu.Unlock()
	return nil
}

// httpOK checks that url answers 200; what names it in the error when
// it does not.
func httpOK(url, what string) func(context.Context) error {
	client := &http.Client{Timeout: time.Second}
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", what, resp.Status)
		}
		return nil
	}
}

// scraping checks that the Prometheus at url has n active targets.
func scraping(url string, n int) func(context.Context) error {
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/v1/targets?state=active", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				ActiveTargets []json.RawMessage `json:"activeTargets"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return fmt.Errorf("targets: %w", err)
		}
		if got := len(body.Data.ActiveTargets); got != n {
			return fmt.Errorf("scraping %d targets of %d", got, n)
		}
		return nil
	}
}

// prometheusVersion asks a running Prometheus its version; "" if it cannot.
func prometheusVersion(ctx context.Context, url string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/v1/status/buildinfo", nil)
	resp, err := (&http.Client{Timeout: time.Second}).Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var bi struct {
		Data struct {
			Version string `json:"version"`
		} `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&bi)
	return bi.Data.Version
}
