// Package targets provides what an experiment attacks and observes: the
// replicas' endpoints and their control API, and handles to the Redis and
// Postgres behind them. Testbed opens one from a testbed's status.
package targets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/compose"
)

// Target is a service under test with the handles an experiment needs.
type Target struct {
	Status testbed.Status
	Redis  *redis.Client // direct, for triggers and observers
	DB     *pgxpool.Pool // superuser, for observers
	// Toxiproxy controls the proxies between the replicas and their
	// dependencies; nil when the target has none.
	Toxiproxy *toxiclient.Client
	http      *http.Client
}

// Testbed opens a target on a running testbed.
func Testbed(ctx context.Context, st testbed.Status) (*Target, error) {
	if len(st.API) == 0 {
		return nil, errors.New("testbed status lists no API replica")
	}
	ropt, err := redis.ParseURL(st.Redis)
	if err != nil {
		return nil, fmt.Errorf("redis url %q: %w", st.Redis, err)
	}
	ropt.DisableIdentity = true
	pcfg, err := pgxpool.ParseConfig(st.Postgres)
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", err)
	}
	pcfg.MaxConns = 4
	db, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	t := &Target{Status: st, Redis: redis.NewClient(ropt), DB: db, http: &http.Client{Timeout: 10 * time.Second}}
	if st.Toxiproxy != "" {
		t.Toxiproxy = toxiclient.NewClient(st.Toxiproxy)
	}
	if err := db.Ping(ctx); err != nil {
		t.Close()
		return nil, fmt.Errorf("postgres %s: %w", st.Postgres, err)
	}
	if err := t.Redis.Ping(ctx).Err(); err != nil {
		t.Close()
		return nil, fmt.Errorf("redis %s: %w", st.Redis, err)
	}
	return t, nil
}

// Close releases the handles.
func (t *Target) Close() {
	t.DB.Close()
	_ = t.Redis.Close()
}

// Configure sets every replica's run-time config.
func (t *Target) Configure(ctx context.Context, c api.Config) error {
	body, _ := json.Marshal(c)
	return t.each(ctx, http.MethodPut, "/admin/config", body, nil)
}

// Reset clears every replica's in-process state and counters, and seeds
// replica i with seed+i.
func (t *Target) Reset(ctx context.Context, seed uint64) error {
	for i, u := range t.Status.API {
		body, _ := json.Marshal(map[string]uint64{"seed": seed + uint64(i)})
		if err := t.do(ctx, http.MethodPost, u+"/admin/reset", body, nil); err != nil {
			return err
		}
	}
	return nil
}

// Restart asks the testbed's supervisor to restart part ("api", "redis",
// "postgres"), all at once or rolling, and returns the processes restarted.
// A docker compose testbed restarts its services through compose.
func (t *Target) Restart(ctx context.Context, part string, rolling bool) ([]string, error) {
	if t.Status.Provider == compose.Provider {
		return compose.Restart(ctx, t.Status.StateDir, part, rolling)
	}
	if t.Status.Control == "" {
		return nil, errors.New("restart: the testbed has no control API (its supervisor predates it: testbed down, then up)")
	}
	body, _ := json.Marshal(map[string]any{"part": part, "rolling": rolling})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Status.Control+"/restart", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	// a rolling restart takes as long as it takes: ctx bounds it
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("restart %s: %w", part, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("restart %s: %s: %s", part, resp.Status, strings.TrimSpace(string(b)))
	}
	var res struct {
		Restarted []string `json:"restarted"`
	}
	return res.Restarted, json.Unmarshal(b, &res)
}

// Config reads the first replica's run-time config.
func (t *Target) Config(ctx context.Context) (api.Config, error) {
	var c api.Config
	err := t.do(ctx, http.MethodGet, t.Status.API[0]+"/admin/config", nil, &c)
	return c, err
}

// Get requests one item from replica i and returns the status code.
func (t *Target) Get(ctx context.Context, i int, id int64) (int, error) {
	url := fmt.Sprintf("%s/items/%d", t.Status.API[i%len(t.Status.API)], id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Metrics sums every herdbench_api_* counter and gauge over the replicas.
func (t *Target) Metrics(ctx context.Context) (map[string]float64, error) {
	sum := map[string]float64{}
	for _, u := range t.Status.API {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		resp, err := t.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", u, err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", u, err)
		}
		for name, mf := range mfs {
			if !strings.HasPrefix(name, "herdbench_api_") {
				continue
			}
			for _, m := range mf.GetMetric() {
				sum[name] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum, nil
}

func (t *Target) each(ctx context.Context, method, path string, body []byte, out any) error {
	for _, u := range t.Status.API {
		if err := t.do(ctx, method, u+path, body, out); err != nil {
			return err
		}
	}
	return nil
}

func (t *Target) do(ctx context.Context, method, url string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
