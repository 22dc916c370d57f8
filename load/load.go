package load

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herdbench/herdbench/retry"
)

// Config is one steady attack.
type Config struct {
	Targets  []string      // base URLs, used round-robin
	Rate     int           // requests per second, open model
	Duration time.Duration // how long to attack
	Request  Request       // how a key becomes a request; zero: GET /items/{key}
	// Classes are a mix of requests, each its share of Rate; empty: one
	// class, Request. Record.Class is a request's index in them.
	Classes  []Class
	Source   KeySource     `json:"-"` // where keys come from; nil: Zipf over ids 1..Keys
	Keys     int           // item ids 1..Keys, without Source
	Zipf     float64       // Zipf exponent s > 1: P(id) ∝ id^-s, without Source
	Header   http.Header   // sent with every request (a target's headers, an arm's)
	Query    url.Values    // added to every request's query (an arm's)
	Seed     uint64        // seeds the key draws
	Timeout  time.Duration // client timeout per attempt
	Clients  int           // virtual clients sharing the load, each with its own retry state; 0 means 1
	Retry    retry.Policy  // what a client does after a failed attempt
	Budget   retry.Budget  // what bounds a client's retries
	Throttle float64       // adaptive throttling's K (the SRE book uses 2); 0 is off
	Hedge    retry.Hedge   // hedge slow attempts to another replica; zero is off
	Breaker  retry.Breaker // each client's own circuit breaker; zero is off
	// ShedStatuses are the statuses that mean the service shed the load
	// (outcome Shed); empty: DefaultShedStatuses
	ShedStatuses Shedding `json:"shed_statuses,omitempty"`
	// FailStatuses are the 4xx that count as failures (outcome Other);
	// any other 4xx is an answer (Status4xx)
	FailStatuses []int `json:"fail_statuses,omitempty"`
	// Critical is the share of requests marked critical (the X-Priority
	// header), chosen by a fixed hash of the request's sequence number
	Critical float64
	// MaxWorkers caps the concurrent requests (workers, each one request
	// at a time); 0 leaves it unbounded, so the generator keeps its
	// schedule while the server stalls.
	MaxWorkers uint64
	// Start is when the schedule begins: Attack waits for it once it is
	// ready, so a caller's instants (T) fall on the schedule. Zero: as soon
	// as it is ready. A Start already past makes every request late by as
	// much, and the records say so.
	Start time.Time
	// Stripe, of Stripes, is this generator's share of a schedule split
	// over several (workers): it sends the schedule's requests k with
	// k mod Stripes = Stripe, at the instants the whole schedule has them,
	// as k6's execution segments do, so the stripes' union is the single
	// schedule. Record.Seq is k. Zero Stripes: the whole schedule.
	Stripe, Stripes int
	// Cut, when set, may end the schedule before Duration; nil: never
	Cut *Cut `json:"-"`
	// Steps, when set, may lower the schedule's rate while it runs; nil:
	// Rate throughout
	Steps *Steps `json:"-"`
}

// Record is one request's end. Every request the schedule owed the
// service has one, also those the generator never sent (Outcome Unsent).
type Record struct {
	Seq      uint64
	Intended time.Time     // start + (Seq+1)/Rate (or as Steps have it), when the pacer schedules it
	Left     time.Time     // when it left the generator: its first attempt, or the client's own refusal; zero when Unsent
	Latency  time.Duration // from Intended to the end of the last attempt; 0 when Unsent
	Outcome  Outcome       // the last attempt's
	Attempts int           // attempts sent, retries and hedges included; 0 when the client refused every one
	Hedges   int           // of Attempts, the hedged copies
	SentAt   []time.Time   // when each attempt left
	Code     int
	Cache    string // the X-Cache header, if any
	Critical bool   // sent with X-Priority: critical
	Class    int    // its class: an index in Config.Classes; 0 without classes
	// What vegeta's result has of it, for its encoders (-o vegeta=): the
	// request's method and URL, the error vegeta saw (a status of 400 or
	// more included), the bytes of its body
	Method, URL, Error string
	BytesOut           uint64
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Targets) == 0 {
		errs = append(errs, errors.New("targets: none"))
	}
	if c.Rate < 1 {
		errs = append(errs, fmt.Errorf("rate: %d (accepted: 1 or more requests/s)", c.Rate))
	}
	if c.Source == nil && c.Keys < 1 {
		errs = append(errs, fmt.Errorf("keys: %d (accepted: 1 or more)", c.Keys))
	}
	if c.Source == nil && c.Zipf <= 1 {
		errs = append(errs, fmt.Errorf("zipf: %g (accepted: greater than 1)", c.Zipf))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration: %s (accepted: more than 0)", c.Duration))
	}
	if c.Critical < 0 || c.Critical > 1 {
		errs = append(errs, fmt.Errorf("critical: %g (accepted: 0 to 1, a share of requests)", c.Critical))
	}
	if c.Throttle < 0 {
		errs = append(errs, fmt.Errorf("throttle: %g (accepted: 0, off, or K above 0 such as 2)", c.Throttle))
	}
	if c.Clients < 0 {
		errs = append(errs, fmt.Errorf("clients: %d (accepted: 0 or more)", c.Clients))
	}
	if c.Stripes < 0 || (c.Stripes > 0 && (c.Stripe < 0 || c.Stripe >= c.Stripes)) {
		errs = append(errs, fmt.Errorf("stripe: %d of %d (accepted: 0 to stripes - 1)", c.Stripe, c.Stripes))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout: %s (accepted: more than 0)", c.Timeout))
	}
	errs = append(errs, validateClasses(c.Classes))
	return errors.Join(errs...)
}

// criticalHeader marks a request that must be served (the testbed's
// shed_priority admits it first).
const criticalHeader = "X-Priority"

// isCritical says whether request i is one of the share marked critical: a
// fixed hash of i, so the same requests are critical in every arm.
func isCritical(i uint64, share float64) bool {
	return share > 0 && float64(mix(i)%10_000) < share*10_000
}

// Request is how a key becomes a request: {key} in Path, in a Query value,
// in a Headers value or in Body is replaced by the key.
type Request struct {
	Method  string            // GET when empty
	Path    string            // /items/{key} when empty
	Query   map[string]string // added to the query
	Headers map[string]string
	Body    string `json:",omitempty"` // sent as it is, {key} replaced; empty: none
}

// NoRedirects makes a client return a redirect as the response: the load
// goes where the plan says, and a redirect to a host nobody allowed (a
// login page elsewhere) never receives the requests or their headers. A
// 3xx counts as the outcome "other".
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// NewClient is an HTTP client for the service under test: it never follows
// a redirect (NoRedirects), gives up after timeout, and sends through rt
// (nil: the default transport).
func NewClient(timeout time.Duration, rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, Timeout: timeout, CheckRedirect: NoRedirects}
}

func (r Request) orDefault() Request {
	r.Method = cmp.Or(r.Method, http.MethodGet)
	if r.Path == "" && len(r.Query) == 0 && len(r.Headers) == 0 {
		r.Path = "/items/{key}"
	}
	return r
}

// New builds the request for key on base, with header under the
// request's own headers and query added, as the load sends it.
func (r Request) New(ctx context.Context, base, key string, header http.Header, query url.Values) (*http.Request, error) {
	var body io.Reader
	if f := r.bodyFunc(); f != nil {
		body = bytes.NewReader(f(key))
	}
	req, err := http.NewRequestWithContext(ctx, r.MethodOrGet(), r.URL(base, key, query), body)
	if err != nil {
		return nil, err
	}
	req.Header = r.Header(key, header)
	return req, nil
}

// MethodOrGet is the request's method, GET when the template sets none.
func (r Request) MethodOrGet() string { return r.orDefault().Method }

// URL is the request's URL for key on base, with extra query values.
func (r Request) URL(base, key string, extra url.Values) string {
	r = r.orDefault()
	u := strings.TrimSuffix(base, "/") + strings.ReplaceAll(r.Path, "{key}", url.PathEscape(key))
	q := url.Values{}
	for k, v := range r.Query {
		q.Set(k, strings.ReplaceAll(v, "{key}", key))
	}
	for k, vs := range extra {
		q[k] = append(q[k], vs...)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// urlFunc is URL for base and extra as a function of the key, with the
// parts that do not depend on the key put together once.
func (r Request) urlFunc(base string, extra url.Values) func(key string) string {
	r = r.orDefault()
	slow := func(key string) string { return r.URL(base, key, extra) }
	for _, v := range r.Query {
		if strings.Contains(v, "{key}") {
			return slow
		}
	}
	before, after, templated := strings.Cut(r.Path, "{key}")
	if strings.Contains(after, "{key}") {
		return slow
	}
	q := url.Values{}
	for k, v := range r.Query {
		q.Set(k, v)
	}
	for k, vs := range extra {
		q[k] = append(q[k], vs...)
	}
	tail := ""
	if len(q) > 0 {
		tail = "?" + q.Encode()
	}
	prefix := strings.TrimSuffix(base, "/") + before
	if !templated {
		whole := prefix + tail
		return func(string) string { return whole }
	}
	after += tail
	return func(key string) string { return prefix + url.PathEscape(key) + after }
}

// Header is the request's headers for key: base's, then the template's.
func (r Request) Header(key string, base http.Header) http.Header {
	h := base.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, v := range r.Headers {
		h.Set(k, strings.ReplaceAll(v, "{key}", key))
	}
	return h
}
