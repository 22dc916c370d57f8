package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client talks to one replica's admin endpoints and metrics. It is the one
// client of the API: the testbed's subject and both providers use it, and
// the edge role's fleet administers edges with it (Call).
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

// Config reads the replica's run-time config, as the JSON it answers.
func (c *Client) Config(ctx context.Context) (json.RawMessage, error) {
	var cfg json.RawMessage
	_, err := c.do(ctx, http.MethodGet, PathConfig, nil, &cfg, success)
	return cfg, err
}

// SetConfig replaces the replica's run-time config with cfg, a whole
// config as JSON (the server's Config, or what Config read).
func (c *Client) SetConfig(ctx context.Context, cfg json.Marshaler) error {
	_, err := c.do(ctx, http.MethodPut, PathConfig, cfg, nil, success)
	return err
}

// Patch sets the knobs p names over the config the replica was started
// with, and returns the config it runs now, as JSON.
func (c *Client) Patch(ctx context.Context, p Patch) (json.RawMessage, error) {
	var cfg json.RawMessage
	if p == nil {
		p = Patch{}
	}
	_, err := c.do(ctx, http.MethodPut, PathConfig, p, &cfg, success)
	return cfg, err
}

// Reset clears the replica's in-process state and counters and, when seed
// is not nil, reseeds it.
func (c *Client) Reset(ctx context.Context, seed *uint64) error {
	var body any
	if seed != nil {
		body = ResetRequest{Seed: seed}
	}
	_, err := c.do(ctx, http.MethodPost, PathReset, body, nil, success)
	return err
}

// Fill caches the items from..to as misses would (POST /admin/fill).
func (c *Client) Fill(ctx context.Context, from, to int64) (FillResponse, error) {
	var res FillResponse
	_, err := c.do(ctx, http.MethodPost, PathFill, FillRequest{From: from, To: to}, &res, success)
	return res, err
}

// Health reads /healthz. A replica whose dependency is away answers 503
// with its health all the same; the error is for a replica that does not
// answer at all.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	_, err := c.do(ctx, http.MethodGet, PathHealth, nil, &h, func(code int) bool {
		return success(code) || code == http.StatusServiceUnavailable
	})
	return h, err
}

// Item requests one item, as a client of the service would, and returns
// the status code.
func (c *Client) Item(ctx context.Context, id int64) (int, error) {
	return c.do(ctx, http.MethodGet, ItemPath(id), nil, nil, nil)
}

// Counters reads the replica's herdbench_api_* counters.
func (c *Client) Counters(ctx context.Context) (Counters, error) {
	m, err := c.Metrics(ctx)
	if err != nil {
		return Counters{}, err
	}
	return CountersOf(m), nil
}

// Metrics scrapes the server's /metrics.
func (c *Client) Metrics(ctx context.Context) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+PathMetrics, nil)
	if err != nil {
		return Metrics{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Metrics{}, fmt.Errorf("scrape %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	m, err := ParseMetrics(resp.Body)
	if err != nil {
		return Metrics{}, fmt.Errorf("scrape %s: %w", c.URL, err)
	}
	return m, nil
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
