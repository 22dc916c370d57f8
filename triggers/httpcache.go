package triggers

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/figure"
)

// HTTPCache is an HTTP cache in front of the service (nginx, Varnish, a
// CDN) that herdbench invalidates through the cache's own API: a request
// per key (PURGE /items/{key}), and for the whole cache a request (BAN) or
// a command. Every invalidation goes to each of URLs, one per cache node.
type HTTPCache struct {
	URLs  []string     // base URLs of the cache nodes, each loopback or allowed
	Purge CacheRequest // one key's invalidation: {key} in its path or a header
	// FlushRequest is the whole cache's invalidation (BAN); Run, a
	// command, when it is nil
	FlushRequest *CacheRequest
	Run          string        // the whole cache's invalidation as a command, when FlushRequest is nil
	Header       http.Header   // sent with every invalidation: the target's headers, then the arm's
	Query        url.Values    // the arm's query values, added to every invalidation
	Client       *http.Client  // nil: a client of its own that follows no redirect
	Limit        time.Duration // how long one invalidation, or the flush command, may take
}

var (
	_ Cache     = (*HTTPCache)(nil)
	_ Selective = (*HTTPCache)(nil)
)

// Keyed is always true: an HTTP cache is declared with its purge request
// for one key (http_cache.purge).
func (c *HTTPCache) Keyed() bool { return true }

func (c *HTTPCache) DescribeDelete(hot []string) string {
	return fmt.Sprintf("%s, with the arm's selection, for each of %d hot keys: %s", c.describe(c.Purge), len(hot), list(hot))
}

// Delete purges the hot keys on every cache node.
func (c *HTTPCache) Delete(ctx context.Context, hot []string) (Touched, error) {
	a, err := c.purgeKeys(ctx, hot)
	return Touched{Keys: len(hot), HTTPCache: &a}, err
}

// Flushes says whether the target declares how to invalidate the whole
// cache: a request or a command (http_cache.flush).
func (c *HTTPCache) Flushes() bool { return c.FlushRequest != nil || c.Run != "" }

func (c *HTTPCache) DescribeFlush() string {
	if c.FlushRequest != nil {
		return c.describe(*c.FlushRequest)
	}
	return fmt.Sprintf("run %q (sh -c, on this machine, at most %s)", c.Run, c.Limit)
}

// Flush invalidates the whole cache, its command running with the arm's
// variables (Environ).
func (c *HTTPCache) Flush(ctx context.Context, env Env) (Touched, error) {
	a, err := c.flushAll(ctx, Environ(env))
	return Touched{HTTPCache: &a}, err
}

// Select makes the arm's headers and query values go with every
// invalidation: a cache that keys its entries by the arm's header purges
// the arm's own.
func (c *HTTPCache) Select(headers, query map[string]string) {
	if c.Header == nil {
		c.Header = http.Header{}
	}
	for k, v := range headers {
		c.Header.Set(k, v)
	}
	c.Query = url.Values{}
	for k, v := range query {
		c.Query.Set(k, v)
	}
}

// CacheRequest is one invalidation request: its method (a token such as
// PURGE, BAN or DELETE), its path and headers, {key} replaced by the key.
type CacheRequest struct {
	Method  string
	Path    string
	Headers map[string]string
}

// CacheAnswers is what an HTTP cache was sent and answered: the results'
// trigger.detail.http_cache.
type CacheAnswers struct {
	Method   string           `json:"method"`
	Sent     int              `json:"sent"`              // requests sent: keys × cache nodes
	Statuses map[string]int64 `json:"statuses"`          // how many of them each status answered
	Errors   int              `json:"errors"`            // sent and never answered
	TookMS   int64            `json:"took_ms"`           // from the first request to the last answer
	Command  *Outcome         `json:"command,omitempty"` // the flush command, when the cache is flushed by one
}

// cacheAnswers are the figures of the HTTP cache's answers.
var cacheAnswers = figure.Decl[CacheAnswers]{
	figure.CountOf("sent", func(a *CacheAnswers) *int { return &a.Sent }),
	figure.Counts("statuses", func(a *CacheAnswers) *map[string]int64 { return &a.Statuses }),
	figure.CountOf("errors", func(a *CacheAnswers) *int { return &a.Errors }),
	figure.MillisOf("took_ms", func(a *CacheAnswers) *int64 { return &a.TookMS }),
	figure.Nullable("command", func(a *CacheAnswers) **Outcome { return &a.Command }, outcome).OmitEmpty(),
}

// purgeConcurrency bounds the invalidations in flight at once.
const purgeConcurrency = 32

// purgeKeys invalidates each key on every cache node, at most
// purgeConcurrency at once. A 2xx is an invalidated entry and a 404 one
// the cache did not hold (nginx's cache purge and Varnish's purge answer
// so); any other status, or no answer, fails it, naming the first.
func (c *HTTPCache) purgeKeys(ctx context.Context, keys []string) (CacheAnswers, error) {
	var reqs []*http.Request
	for _, base := range c.URLs {
		for _, k := range keys {
			r, err := c.request(ctx, base, c.Purge, k)
			if err != nil {
				return CacheAnswers{}, err
			}
			reqs = append(reqs, r)
		}
	}
	return c.send(reqs, c.Purge.Method)
}

// flushAll invalidates the whole cache: the flush request on every node,
// or the flush command once.
func (c *HTTPCache) flushAll(ctx context.Context, environ []string) (CacheAnswers, error) {
	if c.FlushRequest == nil {
		o, _, _, err := shell(ctx, c.Run, c.Limit, environ)
		a := CacheAnswers{Method: "command", Command: &o, TookMS: o.TookMS}
		if err != nil {
			return a, fmt.Errorf("flush command: %w: %s", err, lastLine(o.Output))
		}
		return a, nil
	}
	var reqs []*http.Request
	for _, base := range c.URLs {
		r, err := c.request(ctx, base, *c.FlushRequest, "")
		if err != nil {
			return CacheAnswers{}, err
		}
		reqs = append(reqs, r)
	}
	return c.send(reqs, c.FlushRequest.Method)
}

// request is cr on base for key, with the cache's headers and query.
func (c *HTTPCache) request(ctx context.Context, base string, cr CacheRequest, key string) (*http.Request, error) {
	path := strings.ReplaceAll(cr.Path, "{key}", url.PathEscape(key))
	r, err := http.NewRequestWithContext(ctx, cr.Method, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		return nil, fmt.Errorf("http cache: %s %s: %w", cr.Method, path, err)
	}
	for k, vs := range c.Header {
		r.Header[k] = slices.Clone(vs)
	}
	for k, v := range cr.Headers {
		r.Header.Set(k, strings.ReplaceAll(v, "{key}", key))
	}
	if len(c.Query) > 0 {
		q := r.URL.Query()
		for k, vs := range c.Query {
			q[k] = slices.Clone(vs)
		}
		r.URL.RawQuery = q.Encode()
	}
	return r, nil
}

// send sends reqs, purgeConcurrency at once, and counts the answers.
func (c *HTTPCache) send(reqs []*http.Request, method string) (CacheAnswers, error) {
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: c.Limit, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	a := CacheAnswers{Method: method, Sent: len(reqs), Statuses: map[string]int64{}}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, purgeConcurrency)
	)
	started := time.Now()
	for _, r := range reqs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			status, err := answer(client, r)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				a.Errors++
			default:
				a.Statuses[strconv.Itoa(status)]++
				if status/100 != 2 && status != http.StatusNotFound {
					err = fmt.Errorf("answered %d (accepted: 2xx, invalidated, or 404, not cached)", status)
				}
			}
			if err != nil && first == nil {
				first = fmt.Errorf("http cache: %s %s: %w", r.Method, r.URL.Redacted(), err)
			}
		})
	}
	wg.Wait()
	a.TookMS = time.Since(started).Milliseconds()
	return a, first
}

// answer sends r and reads its answer whole, so the connection is reused.
func answer(client *http.Client, r *http.Request) (int, error) {
	resp, err := client.Do(r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, err
}

// lastLine is the last non-empty line of a command's output.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// describe says what the cache's invalidations are, for a dry run: the
// requests and the nodes, header names but never their values.
func (c *HTTPCache) describe(cr CacheRequest) string {
	s := cr.Method + " " + cr.Path
	if len(cr.Headers) > 0 {
		s += " (headers " + strings.Join(slices.Sorted(maps.Keys(cr.Headers)), ", ") + ")"
	}
	return s + " on " + strings.Join(c.URLs, ", ")
}
