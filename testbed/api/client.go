package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Client talks to one replica's admin endpoints and metrics. It is the one
// client of the API: the experiment, both providers and the targets use it.
type Client struct {
	URL  string // the replica's base URL
	http *http.Client
}

// NewClient returns a client of the replica at base.
func NewClient(base string) *Client {
	return &Client{URL: strings.TrimSuffix(base, "/"), http: &http.Client{Timeout: 10 * time.Second,
		// an answer is the replica's own, never where it points
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Config reads the replica's run-time config.
func (c *Client) Config(ctx context.Context) (Config, error) {
	var cfg Config
	_, err := c.do(ctx, http.MethodGet, "/admin/config", nil, &cfg, success)
	return cfg, err
}

// SetConfig replaces the replica's run-time config.
func (c *Client) SetConfig(ctx context.Context, cfg Config) error {
	_, err := c.do(ctx, http.MethodPut, "/admin/config", cfg, nil, success)
	return err
}

// Patch sets the knobs p names over the config the replica was started
// with, and returns the config it runs now.
func (c *Client) Patch(ctx context.Context, p Patch) (Config, error) {
	var cfg Config
	if p == nil {
		p = Patch{}
	}
	_, err := c.do(ctx, http.MethodPut, "/admin/config", p, &cfg, success)
	return cfg, err
}

// Reset clears the replica's in-process state and counters and, when seed
// is not nil, reseeds it.
func (c *Client) Reset(ctx context.Context, seed *uint64) error {
	var body any
	if seed != nil {
		body = map[string]uint64{"seed": *seed}
	}
	_, err := c.do(ctx, http.MethodPost, "/admin/reset", body, nil, success)
	return err
}

// Fill caches the items from..to as misses would (POST /admin/fill).
func (c *Client) Fill(ctx context.Context, from, to int64) (FillResponse, error) {
	var res FillResponse
	_, err := c.do(ctx, http.MethodPost, "/admin/fill", FillRequest{From: from, To: to}, &res, success)
	return res, err
}

// Health reads /healthz. A replica whose dependency is away answers 503
// with its health all the same; the error is for a replica that does not
// answer at all.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	_, err := c.do(ctx, http.MethodGet, "/healthz", nil, &h, func(code int) bool {
		return success(code) || code == http.StatusServiceUnavailable
	})
	return h, err
}

// Item requests one item, as a client of the service would, and returns
// the status code.
func (c *Client) Item(ctx context.Context, id int64) (int, error) {
	return c.do(ctx, http.MethodGet, fmt.Sprintf("/items/%d", id), nil, nil, nil)
}

// Counters reads the replica's herdbench_api_* counters.
func (c *Client) Counters(ctx context.Context) (Counters, error) {
	mfs, err := c.Metrics(ctx)
	if err != nil {
		return Counters{}, err
	}
	var cs Counters
	for name, v := range cs.byName() {
		*v = Sum(mfs, name)
	}
	return cs, nil
}

// Metrics scrapes the server's /metrics: its families by name.
func (c *Client) Metrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", c.URL, err)
	}
	return mfs, nil
}

// Sum is a counter's or a gauge's value summed over its series, those
// whose labels include every pair of match ("outcome", "ok") when given.
func Sum(mfs map[string]*dto.MetricFamily, name string, match ...string) int64 {
	var sum float64
next:
	for _, m := range mfs[name].GetMetric() {
		for i := 0; i+1 < len(match); i += 2 {
			if !hasLabel(m, match[i], match[i+1]) {
				continue next
			}
		}
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return int64(sum)
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return false
}

// Call sends an admin request with body as JSON and decodes a 2xx answer
// into out; any other answer is an error carrying the server's own words.
// Other servers of the testbed (the edge role) are administered with it.
func (c *Client) Call(ctx context.Context, method, path string, body, out any) error {
	_, err := c.do(ctx, method, path, body, out, success)
	return err
}

// success is a 2xx status.
func success(code int) bool { return code >= 200 && code < 300 }

// do sends a request with body as JSON and decodes the answer into out. An
// answer whose status ok refuses is an error carrying the replica's own
// words; with ok nil, any status is returned without error.
func (c *Client) do(ctx context.Context, method, path string, body, out any, ok func(int) bool) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
	if err != nil {
		return 0, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, c.URL+path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ok != nil && !ok(resp.StatusCode) {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, c.URL+path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, c.URL+path, err)
		}
	}
	return resp.StatusCode, nil
}

// Fleet is every replica of a testbed, in order.
type Fleet []*Client

// NewFleet returns clients of the replicas at urls.
func NewFleet(urls []string) Fleet {
	f := make(Fleet, len(urls))
	for i, u := range urls {
		f[i] = NewClient(u)
	}
	return f
}

// Config reads the first replica's run-time config: every replica of an
// experiment has the same.
func (f Fleet) Config(ctx context.Context) (Config, error) {
	if len(f) == 0 {
		return Config{}, errors.New("no replica")
	}
	return f[0].Config(ctx)
}

// SetConfig sets every replica's run-time config.
func (f Fleet) SetConfig(ctx context.Context, cfg Config) error {
	for _, c := range f {
		if err := c.SetConfig(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}

// Patch sets the knobs p names on every replica, over the config each was
// started with, and returns the config the first runs now.
func (f Fleet) Patch(ctx context.Context, p Patch) (Config, error) {
	var first Config
	for i, c := range f {
		cfg, err := c.Patch(ctx, p)
		if err != nil {
			return Config{}, err
		}
		if i == 0 {
			first = cfg
		}
	}
	return first, nil
}

// Reset resets every replica and seeds replica i with seed+i, so each
// draws its own numbers and a run replays from its seed.
func (f Fleet) Reset(ctx context.Context, seed uint64) error {
	for i, c := range f {
		s := seed + uint64(i)
		if err := c.Reset(ctx, &s); err != nil {
			return err
		}
	}
	return nil
}

// Fill caches the items from..to as misses would, each replica a share of
// them, all at once.
func (f Fleet) Fill(ctx context.Context, from, to int64) (FillResponse, error) {
	if len(f) == 0 || to < from {
		return FillResponse{}, nil
	}
	share := (to - from + int64(len(f))) / int64(len(f))
	res := make([]FillResponse, len(f))
	errs := make([]error, len(f))
	var wg sync.WaitGroup
	for i, c := range f {
		lo := from + int64(i)*share
		hi := min(lo+share-1, to)
		if lo > hi {
			continue
		}
		wg.Go(func() { res[i], errs[i] = c.Fill(ctx, lo, hi) })
	}
	wg.Wait()
	var sum FillResponse
	for _, r := range res {
		sum.Filled += r.Filled
		sum.Queries += r.Queries
	}
	return sum, errors.Join(errs...)
}

// Counters sums every replica's counters.
func (f Fleet) Counters(ctx context.Context) (Counters, error) {
	var sum Counters
	for _, c := range f {
		cs, err := c.Counters(ctx)
		if err != nil {
			return Counters{}, err
		}
		sum = sum.Plus(cs)
	}
	return sum, nil
}

// WriteLag is the queue's lag from acknowledgement to applied over the
// replicas' MetricWriteLag histograms, summed: how many writes it covers,
// and its median and 99th percentile, interpolated within their buckets
// as Prometheus' histogram_quantile does.
type WriteLag struct {
	Count int64   `json:"count"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// WriteLag reads every replica's write lag histogram and sums them.
func (f Fleet) WriteLag(ctx context.Context) (WriteLag, error) {
	var count uint64
	cum := map[float64]uint64{} // upper bound -> writes at or below it
	for _, c := range f {
		mfs, err := c.Metrics(ctx)
		if err != nil {
			return WriteLag{}, err
		}
		for _, m := range mfs[MetricWriteLag].GetMetric() {
			count += m.GetHistogram().GetSampleCount()
			for _, b := range m.GetHistogram().GetBucket() {
				cum[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
	}
	bounds := slices.Sorted(maps.Keys(cum))
	q := func(q float64) float64 {
		rank, lo, prev := q*float64(count), 0.0, uint64(0)
		for _, b := range bounds {
			if c := cum[b]; float64(c) >= rank && c > prev {
				return (lo + (b-lo)*(rank-float64(prev))/float64(c-prev)) * 1000
			}
			lo, prev = b, cum[b]
		}
		return lo * 1000 // past the last finite bucket: its bound, as Prometheus
	}
	if count == 0 {
		return WriteLag{}, nil
	}
	return WriteLag{Count: int64(count), P50MS: math.Round(q(0.5)*100) / 100, P99MS: math.Round(q(0.99)*100) / 100}, nil
}
