// Package edge is the testbed's edge role: tier A of a call chain, in front
// of the API replicas (tier B, package api), which have the cache in front
// of the database (C). An edge replica answers GET /items/{id} by calling a
// B replica over HTTP, each attempt with its own timeout, and retries a
// failed attempt (a transport error, a timeout or a 5xx) per its retry
// policy and budget: the layer of a cascade where "one request becomes
// three" starts. Its counters say how many requests it got and how many
// attempts it sent downstream, so a run can read each layer's
// amplification from the servers' own figures.
package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/api"
)

// Options configure an edge replica.
type Options struct {
	Name      string
	Upstreams []string      // B replicas' base URLs, called in turn
	Timeout   time.Duration // each attempt's own
	Retry     retry.Policy  // after a failed attempt
	Budget    retry.Budget  // bounds the retries over all of the edge's requests; zero: none
	Seed      uint64        // of the backoff's jitter
}

// The edge's metric names, registered by the edge and read by whoever
// computes a layer's amplification.
const (
	MetricRequests = "herdbench_edge_requests_total"          // by outcome
	MetricAttempts = "herdbench_edge_upstream_attempts_total" // calls to B, retries included
	MetricFailures = "herdbench_edge_upstream_failures_total" // failed calls to B, by reason
)

// Outcomes of an edge request, and reasons an attempt failed.
const (
	OutcomeOK       = "ok"       // B answered below 500 (its 404 included)
	OutcomeFailed   = "failed"   // every attempt the policy allowed failed: 502
	OutcomeBudget   = "budget"   // a retry was due, the budget refused it: 502
	OutcomeCanceled = "canceled" // the client went away

	ReasonTimeout   = "timeout"
	ReasonStatus    = "status" // B answered 5xx
	ReasonTransport = "transport"
)

// Edge is one edge replica.
type Edge struct {
	opts   Options
	client *http.Client
	turn   atomic.Uint64

	mu      sync.Mutex // guards backoff (its random source) and spender
	backoff *retry.Backoff
	spender *retry.Spender

	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	attempts prometheus.Counter
	failures *prometheus.CounterVec
}

// New checks o and returns an edge replica.
func New(o Options) (*Edge, error) {
	if len(o.Upstreams) == 0 {
		return nil, errors.New("edge: no upstream: want at least one API replica's base URL")
	}
	if o.Timeout <= 0 {
		return nil, fmt.Errorf("edge: attempt timeout %s: want more than 0", o.Timeout)
	}
	if o.Retry.Kind == "" {
		o.Retry.Kind = retry.None
	}
	e := &Edge{
		opts: o,
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		}},
		backoff: retry.NewBackoff(o.Retry, rand.New(rand.NewPCG(o.Seed, 0x65646765))), // "edge"
		spender: retry.NewSpender(o.Budget),
		reg:     prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRequests,
			Help: "Item requests the edge answered, by outcome (ok, failed, budget, canceled).",
		}, []string{"outcome"}),
		attempts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricAttempts,
			Help: "Calls the edge sent to the API replicas, first attempts and retries.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricFailures,
			Help: "Calls to the API replicas that failed, by reason (timeout, status, transport).",
		}, []string{"reason"}),
	}
	e.reg.MustRegister(e.requests, e.attempts, e.failures)
	for _, o := range []string{OutcomeOK, OutcomeFailed, OutcomeBudget, OutcomeCanceled} {
		e.requests.WithLabelValues(o)
	}
	for _, r := range []string{ReasonTimeout, ReasonStatus, ReasonTransport} {
		e.failures.WithLabelValues(r)
	}
	return e, nil
}

// Handler serves GET /items/{id}, GET /metrics and GET /healthz.
func (e *Edge) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", e.getItem)
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"edge": e.opts.Name, "upstreams": len(e.opts.Upstreams)})
	})
	return mux
}

func (e *Edge) getItem(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Edge", e.opts.Name)
	id := r.PathValue("id")
	e.mu.Lock()
	e.spender.Request(time.Now())
	e.mu.Unlock()
	var last error
	var prev time.Duration
	cost := 0 // what the last retry cost the budget, refunded on success
	for n := 0; ; n++ {
		status, body, err := e.attempt(r.Context(), id, r.Header)
		if err == nil {
			e.mu.Lock()
			e.spender.Succeeded(cost)
			e.mu.Unlock()
			e.requests.WithLabelValues(OutcomeOK).Inc()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(body)
			return
		}
		if r.Context().Err() != nil {
			e.requests.WithLabelValues(OutcomeCanceled).Inc()
			return
		}
		last = err
		e.mu.Lock()
		retries := e.backoff.Retries()
		var allowed bool
		var delay time.Duration
		if n < retries {
			cost, allowed = e.spender.Allow(time.Now(), errors.Is(err, context.DeadlineExceeded))
			delay = e.backoff.Delay(n, prev)
		}
		e.mu.Unlock()
		switch {
		case n >= retries:
			e.fail(w, OutcomeFailed, fmt.Sprintf("item %s: %d attempts to the API replicas failed, the last: %v", id, n+1, last))
			return
		case !allowed:
			e.fail(w, OutcomeBudget, fmt.Sprintf("item %s: attempt %d failed (%v) and the retry budget %s refused a retry", id, n+1, last, e.opts.Budget))
			return
		}
		prev = delay
		select {
		case <-r.Context().Done():
			e.requests.WithLabelValues(OutcomeCanceled).Inc()
			return
		case <-time.After(delay):
		}
	}
}

func (e *Edge) fail(w http.ResponseWriter, outcome, msg string) {
	e.requests.WithLabelValues(outcome).Inc()
	writeJSON(w, http.StatusBadGateway, map[string]string{"error": msg})
}

// errStatus is a 5xx from B.
type errStatus struct{ code int }

func (e errStatus) Error() string { return "HTTP " + strconv.Itoa(e.code) }

// forwarded are the request headers an edge passes on to B: a request's
// own strategy and priority (testbed/api) travel with it.
var forwarded = []string{api.StrategyHeader, api.PriorityHeader}

// attempt calls one B replica, the next in turn, under the edge's timeout:
// B's answer below 500, or why the attempt failed.
func (e *Edge) attempt(ctx context.Context, id string, h http.Header) (int, []byte, error) {
	e.attempts.Inc()
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	base := e.opts.Upstreams[e.turn.Add(1)%uint64(len(e.opts.Upstreams))]
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/items/"+id, nil)
	if err != nil {
		e.failures.WithLabelValues(ReasonTransport).Inc()
		return 0, nil, err
	}
	for _, k := range forwarded {
		if v := h.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := e.client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		e.failures.WithLabelValues(ReasonTimeout).Inc()
		return 0, nil, fmt.Errorf("no answer within %s: %w", e.opts.Timeout, err)
	case err != nil:
		e.failures.WithLabelValues(ReasonTransport).Inc()
		return 0, nil, err
	case resp.StatusCode >= 500:
		e.failures.WithLabelValues(ReasonStatus).Inc()
		return 0, nil, errStatus{resp.StatusCode}
	}
	return resp.StatusCode, body, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Run serves an edge replica on addr until ctx ends.
func Run(ctx context.Context, addr string, o Options, log *slog.Logger) error {
	e, err := New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	log.Info("edge serving", "edge", o.Name, "addr", ln.Addr().String(), "upstreams", o.Upstreams,
		"timeout", o.Timeout, "retry", o.Retry.String(), "budget", o.Budget.String(), "seed", o.Seed)
	return api.Serve(ctx, ln, e.Handler())
}
