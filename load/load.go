package load

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/retry"
)

// Config is one steady attack.
type Config struct {
	Targets  []string      // base URLs, used round-robin
	Rate     int           // requests per second, open model
	Duration time.Duration // how long to attack
	Request  Request       // how a key becomes a request; zero: GET /items/{key}
	Source   KeySource     // where keys come from; nil: Zipf over ids 1..Keys
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
	// Critical is the share of requests marked critical (the X-Priority
	// header), chosen by a fixed hash of the request's sequence number
	Critical float64
	// MaxWorkers caps vegeta's concurrent requests; 0 leaves it unbounded,
	// so the generator keeps its schedule while the server stalls.
	MaxWorkers uint64
}

// Record is one request's end.
type Record struct {
	Seq      uint64
	Intended time.Time     // start + (Seq+1)/Rate, when the pacer schedules it
	Latency  time.Duration // from Intended to the end of the last attempt
	Outcome  Outcome       // the last attempt's
	Attempts int           // attempts sent, retries and hedges included; 0 when the client refused every one
	Hedges   int           // of Attempts, the hedged copies
	SentAt   []time.Time   // when each attempt left
	Code     int
	Cache    string // the X-Cache header, if any
	Critical bool   // sent with X-Priority: critical
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
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout: %s (accepted: more than 0)", c.Timeout))
	}
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

// Attack runs c until its duration ends or ctx is done, and hands every
// request's Record to record, from one goroutine, in completion order. It
// returns the time the schedule started: Record.Intended is measured from it.
func Attack(ctx context.Context, c Config, record func(Record)) (time.Time, error) {
	if err := c.Validate(); err != nil {
		return time.Time{}, err
	}
	keys := c.Source
	if keys == nil {
		keys = NewKeys(c.Keys, c.Zipf, c.Seed)
	}
	req := c.Request.orDefault()
	var (
		mu sync.Mutex
		n  uint64
	)
	targeter := func(t *vegeta.Target) error {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		key := keys.Key()
		t.Method = req.Method
		t.URL = req.URL(c.Targets[i%uint64(len(c.Targets))], key, c.Query)
		t.Header = req.Header(key, c.Header)
		t.Header.Set(idHeader, strconv.FormatUint(i, 10))
		if isCritical(i, c.Critical) {
			t.Header.Set(criticalHeader, "critical")
		}
		return nil
	}
	h := newHerd(c)
	// each attempt has the timeout; the whole request, retries included,
	// is bounded by vegeta's client timeout
	total := time.Duration(c.Retry.Retries+1)*c.Timeout + time.Duration(c.Retry.Retries)*max(c.Retry.Base, c.Retry.Cap)
	opts := []func(*vegeta.Attacker){vegeta.Client(&http.Client{Transport: h, Timeout: total, CheckRedirect: NoRedirects})}
	if c.MaxWorkers > 0 {
		opts = append(opts, vegeta.Workers(min(c.MaxWorkers, vegeta.DefaultWorkers)), vegeta.MaxWorkers(c.MaxWorkers))
	}
	atk := vegeta.NewAttacker(opts...)
	interval := time.Second / time.Duration(c.Rate)
	pacer := vegeta.ConstantPacer{Freq: c.Rate, Per: time.Second}

	// vegeta's own start is a few microseconds later: intended times are
	// never after the real schedule. Its constant pacer sends hit k at
	// (k+1) intervals from its start (lib/pacer.go), not at k.
	start := time.Now()
	results := atk.Attack(targeter, pacer, c.Duration, "herdbench")
	stopped := make(chan struct{})
	defer close(stopped)
	go func() { // vegeta's Attack takes no context
		select {
		case <-ctx.Done():
			atk.Stop()
		case <-stopped:
		}
	}()
	for res := range results {
		intended := start.Add(time.Duration(res.Seq+1) * interval)
		lat := res.End().Sub(intended)
		if lat < 0 {
			lat = 0
		}
		rec := Record{Seq: res.Seq, Intended: intended, Latency: lat, Code: int(res.Code),
			Outcome: Classify(int(res.Code), res.Error)}
		if id, ok := requestID(res); ok {
			s := h.takeAttempts(id)
			rec.SentAt, rec.Attempts, rec.Hedges = s.at, len(s.at), s.hedges
			rec.Critical = isCritical(id, c.Critical)
		}
		if res.Headers != nil {
			rec.Cache = res.Headers.Get("X-Cache")
		}
		record(rec)
	}
	h.base.CloseIdleConnections() // each arm starts with its own connections
	return start, ctx.Err()
}

// Request is how a key becomes a request: {key} in Path, in a Query value
// or in a Headers value is replaced by the key.
type Request struct {
	Method  string            // GET when empty
	Path    string            // /items/{key} when empty
	Query   map[string]string // added to the query
	Headers map[string]string
}

// NoRedirects makes a client return a redirect as the response: the load
// goes where the plan says, and a redirect to a host nobody allowed (a
// login page elsewhere) never receives the requests or their headers. A
// 3xx counts as the outcome "other".
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (r Request) orDefault() Request {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if r.Path == "" && len(r.Query) == 0 && len(r.Headers) == 0 {
		r.Path = "/items/{key}"
	}
	return r
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

// idHeader carries a request's sequence number from the targeter to the
// herd's transport, which takes it off before sending, and back in the
// response (or the error), so the attack loop finds the request's attempts.
// The service never sees it.
const idHeader = "X-Herdbench-Request"

// idInError finds the sequence number the transport puts in its errors.
var idInError = regexp.MustCompile(`\(herdbench request (\d+)\)`)

// requestID is the sequence number of the request a result is about.
func requestID(res *vegeta.Result) (uint64, bool) {
	s := ""
	if res.Headers != nil {
		s = res.Headers.Get(idHeader)
	}
	if s == "" {
		if m := idInError.FindStringSubmatch(res.Error); m != nil {
			s = m[1]
		}
	}
	id, err := strconv.ParseUint(s, 10, 64)
	return id, err == nil
}
