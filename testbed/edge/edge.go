// Package edge is the testbed's edge role: tier A of a call chain, in front
// of the API replicas (tier B, package api), which have the cache in front
// of the database (C). An edge replica answers GET /items/{id} by calling a
// B replica over HTTP, each attempt with its own timeout, and retries a
// failed attempt (a transport error, a timeout or a 5xx) per its retry
// policy and budget: the layer of a cascade where "one request becomes
// three" starts. Its policy (Config) also holds what stops a cascade at A:
// a retry budget, a circuit breaker on its calls to B, a bulkhead that
// bounds them, and deadline propagation. Its counters say how many requests
// it got and how many attempts it sent downstream, so a run can read each
// layer's amplification from the servers' own figures.
package edge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
)

// Config is an edge replica's policy on its calls to B: what it starts
// with, and what PUT /admin/config replaces, so each arm of a cascade
// experiment sets its own (retry.Layer; the zero value of each
// protection is off).
type Config = retry.Layer

// DefaultTimeout is an attempt's timeout unless a Config says.
const DefaultTimeout = time.Second

// Options configure an edge replica.
type Options struct {
	Name      string
	Upstreams []string // B replicas' base URLs, called in turn
	Seed      uint64   // of the backoff's jitter
	Config             // the policy it starts with
}

// The edge's metric names, registered by the edge and read by whoever
// computes a layer's amplification.
const (
	MetricRequests = "herdbench_edge_requests_total"          // by outcome
	MetricAttempts = "herdbench_edge_upstream_attempts_total" // calls to B, retries included
	MetricFailures = "herdbench_edge_upstream_failures_total" // failed calls to B, by reason
	MetricInFlight = "herdbench_edge_requests_in_flight"      // a gauge: requests being answered
)

// Outcomes of an edge request, and reasons an attempt failed.
const (
	OutcomeOK       = "ok"       // B answered below 500 (its 404 included)
	OutcomeFailed   = "failed"   // every attempt the policy allowed failed: 502
	OutcomeBudget   = "budget"   // a retry was due, the budget refused it: 502
	OutcomeBreaker  = "breaker"  // the breaker was open: 503, no attempt
	OutcomeBulkhead = "bulkhead" // the bulkhead was full: 503, no attempt
	OutcomeExpired  = "expired"  // the deadline passed: 504
	OutcomeCanceled = "canceled" // the client went away

	ReasonTimeout   = "timeout"
	ReasonStatus    = "status" // B answered 5xx
	ReasonTransport = "transport"
)

var outcomes = []string{OutcomeOK, OutcomeFailed, OutcomeBudget, OutcomeBreaker, OutcomeBulkhead, OutcomeExpired, OutcomeCanceled}

// Edge is one edge replica.
type Edge struct {
	name      string
	upstreams []string
	start     Config // what PUT /admin/config starts from
	client    *http.Client
	turn      atomic.Uint64
	busy      atomic.Int64 // requests being answered, MetricInFlight

	mu   sync.Mutex // guards seed, pol and m
	seed uint64
	pol  *policy
	m    *metrics
}

// metrics are the edge's counters. A reset replaces them with a fresh
// registry, so every arm starts from zero.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	attempts prometheus.Counter
	failures *prometheus.CounterVec
}

func newMetrics(busy *atomic.Int64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRequests,
			Help: "Item requests the edge answered, by outcome (ok, failed, budget, breaker, bulkhead, expired, canceled).",
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
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MetricInFlight,
		Help: "Item requests the edge is answering now, retries and backoff included.",
	}, func() float64 { return float64(busy.Load()) })
	m.reg.MustRegister(m.requests, m.attempts, m.failures, inFlight)
	for _, o := range outcomes {
		m.requests.WithLabelValues(o)
	}
	for _, r := range []string{ReasonTimeout, ReasonStatus, ReasonTransport} {
		m.failures.WithLabelValues(r)
	}
	return m
}

// New checks o and returns an edge replica.
func New(o Options) (*Edge, error) {
	if len(o.Upstreams) == 0 {
		return nil, errors.New("edge: no upstream: want at least one API replica's base URL")
	}
	o.Timeout = cmp.Or(o.Timeout, herd.Duration(DefaultTimeout))
	o.Retry.Kind = cmp.Or(o.Retry.Kind, retry.None)
	if err := o.Config.Problems().Err(); err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	e := &Edge{
		name: o.Name, upstreams: o.Upstreams, start: o.Config, seed: o.Seed,
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		}},
	}
	e.m = newMetrics(&e.busy)
	e.pol = e.newPolicy(o.Config)
	return e, nil
}

// newPolicy is a fresh policy of c: a new budget, breaker and bulkhead,
// the backoff's jitter seeded from the edge's seed.
func (e *Edge) newPolicy(c Config) *policy {
	return newPolicy(c, e.name, rand.New(rand.NewPCG(e.seed, 0x65646765))) // "edge"
}

// current is the policy and the counters a request uses from start to end.
func (e *Edge) current() (*policy, *metrics) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pol, e.m
}

// Handler serves GET /items/{id}, the admin endpoints (GET and PUT
// /admin/config, POST /admin/reset), GET /metrics and GET /healthz.
func (e *Edge) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", e.getItem)
	mux.HandleFunc("GET "+admin.PathConfig, func(w http.ResponseWriter, _ *http.Request) {
		p, _ := e.current()
		api.RespondJSON(w, http.StatusOK, p.cfg)
	})
	mux.HandleFunc("PUT "+admin.PathConfig, e.putConfig)
	mux.HandleFunc("POST "+admin.PathReset, e.postReset)
	mux.HandleFunc("GET "+admin.PathMetrics, func(w http.ResponseWriter, r *http.Request) {
		_, m := e.current()
		promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
	mux.HandleFunc("GET "+admin.PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		api.RespondJSON(w, http.StatusOK, map[string]any{"edge": e.name, "upstreams": len(e.upstreams)})
	})
	return mux
}

// putConfig replaces the policy. Fields the body leaves out take the
// edge's start-up values, so the result never depends on earlier calls.
func (e *Edge) putConfig(w http.ResponseWriter, r *http.Request) {
	cfg := e.start
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		api.RespondError(w, http.StatusBadRequest, "invalid edge config: "+err.Error()+
			" (accepted fields: timeout, retry, retry_budget, breaker, bulkhead, deadline)")

		return
	}
	if err := cfg.Problems().Err(); err != nil {
		api.RespondError(w, http.StatusBadRequest, "invalid edge config: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	e.mu.Lock()
	e.pol = e.newPolicy(cfg)
	e.mu.Unlock()
	api.RespondJSON(w, http.StatusOK, cfg)
}

// postReset zeroes the counters and makes the policy's state afresh (the
// budget, the breaker, the backoff's jitter); an optional body {"seed": N}
// reseeds it.
func (e *Edge) postReset(w http.ResponseWriter, r *http.Request) {
	seed, err := api.ReadReset(w, r)
	if err != nil {
		api.RespondError(w, http.StatusBadRequest, err.Error())
		return
	}
	e.mu.Lock()
	if seed != nil {
		e.seed = *seed
	}
	e.m = newMetrics(&e.busy)
	e.pol = e.newPolicy(e.pol.cfg)
	e.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
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
		"policy", e.pol.cfg.String(), "seed", o.Seed)
	return api.Serve(ctx, ln, e.Handler())
}
