package load

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/retry"
)

// herd is the virtual clients behind one transport: request id i belongs to
// client mix(i) % len(clients), which keeps its own backoff state and
// budget, as separate processes would. The hash keeps which client sends a
// request independent of when it is sent: with i % K, a server that admits
// every n-th request would admit the same few clients every time.
//
// The herd is the RoundTripper of the http.Client vegeta's attacker sends
// with: vegeta's hit is one request, its attempts inside.
type herd struct {
	base    *http.Transport
	sched   *schedule     // where each hit falls
	hits    hits          // the hits under way, by vegeta's Seq
	share   float64       // of requests marked critical
	bound   time.Duration // one request's, its retries included (Config.Bound)
	shed    Statuses      // what the target's statuses mean: shedding, failures
	timeout time.Duration // per attempt
	targets []string      // replica base URLs: a hedge goes to the next one
	hedge   time.Duration // 0: off
	clients []*client
}

// sent is what left for one request: when each attempt was sent, hedges
// included, and how many of them were hedges. Only the request's own
// goroutine writes it.
type sent struct {
	at     []time.Time
	hedges int
}

// add records an attempt leaving now.
func (s *sent) add(hedge bool) {
	s.at = append(s.at, time.Now())
	if hedge {
		s.hedges++
	}
}

type client struct {
	mu       sync.Mutex
	backoff  *retry.Backoff
	budget   *retry.Spender
	throttle *retry.Throttle                       // nil: off
	hedger   *retry.Hedger                         // nil: off
	breaker  *gobreaker.TwoStepCircuitBreaker[any] // nil: off
	rng      *rand.Rand
}

// Errors of attempts the client refused itself, never sent.
var (
	errThrottled   = errors.New("herdbench: throttled by the client (adaptive throttling)")
	errBreakerOpen = errors.New("herdbench: refused by the client's open circuit breaker")
)

var _ http.RoundTripper = (*herd)(nil)

// errCut refuses a hit vegeta made after the schedule was cut: vegeta's
// pacer may have been sleeping toward it when the cut came.
var errCut = errors.New("herdbench: due after the schedule's cut, not sent")

func newHerd(c Config, s *schedule) *herd {
	n := max(c.Clients, 1)
	h := &herd{
		base:    newTransport(c.Timeout),
		sched:   s,
		hits:    hits{m: map[uint64]*hit{}},
		share:   c.Critical,
		bound:   c.Bound(),
		shed:    Statuses{Shed: c.ShedStatuses, Fail: c.FailStatuses},
		timeout: c.Timeout,
		targets: c.Targets,
		hedge:   c.Hedge.Delay,
		clients: make([]*client, n),
	}
	for i := range h.clients {
		rng := rand.New(rand.NewPCG(c.Seed, uint64(i)))
		cl := &client{backoff: retry.NewBackoff(c.Retry, rng), budget: retry.NewSpender(c.Budget), rng: rng}
		if c.Throttle > 0 {
			cl.throttle = retry.NewThrottle(c.Throttle)
		}
		if c.Hedge.Delay > 0 {
			cl.hedger = retry.NewHedger(c.Hedge)
		}
		if b := c.Breaker; b.Failures > 0 {
			cl.breaker = gobreaker.NewTwoStepCircuitBreaker[any](gobreaker.Settings{
				Name:        "client-" + strconv.Itoa(i),
				MaxRequests: 1,
				Timeout:     b.Open,
				ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= b.Failures },
			})
		}
		h.clients[i] = cl
	}
	return h
}

// RoundTrip sends vegeta's hit req through its virtual client: the hit's
// number (vegeta's X-Vegeta-Seq) places it on the schedule, which says
// whether it is still owed and whether it is marked critical, and what
// left for it is kept for its record. It sets the critical header on req
// and takes the class header off it, which vegeta made for this hit alone
// and reads no more.
func (h *herd) RoundTrip(req *http.Request) (*http.Response, error) {
	j, ok := seqOf(req)
	if !ok {
		return h.base.RoundTrip(req) // not one of the attack's hits
	}
	k := h.sched.global(j)
	x := &hit{}
	if v := req.Header[classHeader]; len(v) == 1 {
		x.class, _ = strconv.Atoi(v[0])
		delete(req.Header, classHeader) // the targeter's note, not the service's
	}
	h.hits.put(j, x)
	if h.sched.cutBefore(h.sched.due(k)) {
		x.skipped = true
		return nil, errCut
	}
	if x.critical = isCritical(k, h.share); x.critical {
		req.Header.Set(criticalHeader, "critical")
	}
	// The request's bound is its context's deadline, not the http.Client's
	// Timeout: for a RoundTripper it does not know, net/http would bound
	// each request with a timer, two channels and a goroutine of its own
	// (8% of the generator's CPU samples at 5,000 req/s); a deadline that
	// net/http's Transport watches costs one timer.
	ctx, cancel := context.WithTimeout(req.Context(), h.bound)
	resp, err := h.roundTrip(req.WithContext(ctx), k, &x.sent)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose(resp.Body, cancel, true)
	return resp, nil
}

// newTransport is net/http's Transport, set for load as vegeta's attacker
// sets its own: connections kept alive and reused without a cap (vegeta's
// DefaultConnections idle ones per host), dials bounded by the attempt's
// timeout, HTTP/2 where a TLS server offers it (vegeta's -http2, on by
// default), a proxy where the environment names one (HTTPS_PROXY,
// HTTP_PROXY; never for loopback), and no compression negotiated, so every
// answer is read as the server sent it.
func newTransport(timeout time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: vegeta.DefaultConnections,
		TLSHandshakeTimeout: timeout,
		ForceAttemptHTTP2:   true,
		DisableCompression:  true,
	}
}

// failed says whether an attempt's outcome is a failure of the service, as
// breakers and the hedging gate count them.
func failed(o Outcome) bool { return o == Timeout || o == Conn || o == Error5xx || o == Shed }

// admit asks the client's adaptive throttle and circuit breaker whether an
// attempt may leave (err says why not), and its hedging gate whether to
// hedge it; done reports the attempt's outcome to the breaker.
func (c *client) admit(now time.Time) (done func(bool), hedge bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.throttle != nil && c.throttle.Reject(now, c.rng.Float64()) {
		return nil, false, errThrottled
	}
	if c.breaker != nil {
		if done, err = c.breaker.Allow(); err != nil {
			return nil, false, errBreakerOpen
		}
	}
	return done, c.hedger != nil && c.hedger.Allow(now), nil
}

// roundTrip sends request id with its client's retry policy: each attempt
// gets the timeout, failed attempts (no response, 5xx, 429) are retried
// after the policy's delay while retries and budget last, and the last
// attempt's response is returned. What left is noted in s.
func (h *herd) roundTrip(req *http.Request, id uint64, s *sent) (*http.Response, error) {
	c := h.clients[mix(id)%uint64(len(h.clients))]
	c.mu.Lock()
	c.budget.Request(time.Now())
	c.mu.Unlock()
	var prev time.Duration // this request's last wait
	lastCost := 0          // what this request's last retry cost its budget
	// a request that retries nothing has one attempt, which the request's
	// own deadline (its Bound, set by RoundTrip) already bounds: no timer
	// of its own
	single := c.backoff.Retries() == 0
	for n := 0; ; n++ {
		actx, cancel := req.Context(), context.CancelFunc(func() {})
		if !single {
			actx, cancel = context.WithTimeout(actx, h.timeout)
		}
		var resp *http.Response
		breakerDone, hedge, err := c.admit(time.Now())
		refused := err != nil
		if !refused {
			resp, err = h.send(actx, rewound(req, n), s, hedge)
		}
		code, msg := 0, ""
		if err != nil {
			msg = err.Error()
		} else {
			code = resp.StatusCode
		}
		outcome := h.shed.Classify(code, msg)
		c.mu.Lock()
		if c.throttle != nil && !refused && outcome != Shed && outcome != Conn && outcome != Timeout {
			c.throttle.Accepted(time.Now())
		}
		if breakerDone != nil {
			breakerDone(!failed(outcome))
		}
		if c.hedger != nil && !refused {
			c.hedger.Done(time.Now(), failed(outcome))
		}
		retryable := outcome != OK && outcome != Other && outcome != Status4xx && outcome != Throttled && outcome != BreakerOpen && n < c.backoff.Retries()
		if retryable {
			cost, ok := c.budget.Allow(time.Now(), outcome == Timeout)
			retryable, lastCost = ok, cost
		}
		if outcome == OK {
			c.budget.Succeeded(lastCost)
		}
		var delay time.Duration
		if retryable {
			delay = c.backoff.Delay(n, prev)
			prev = delay
		}
		c.mu.Unlock()
		if !retryable {
			if err != nil {
				cancel()
				return nil, err
			}
			resp.Body = cancelOnClose(resp.Body, cancel, !single)
			return resp, nil
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		cancel()
		t := time.NewTimer(delay)
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
	}
}

// mix is splitmix64's finalizer: a fixed, well-spread hash of a request id.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// send makes one attempt of req. With hedge, an attempt that has not
// answered after the hedge delay is copied to the next replica, and the
// first good answer wins; the other is canceled and its body discarded.
// When both fail, the one that ended last is returned.
func (h *herd) send(ctx context.Context, req *http.Request, s *sent, hedge bool) (*http.Response, error) {
	if !hedge {
		s.add(false)
		if ctx == req.Context() {
			return h.base.RoundTrip(req)
		}
		return h.base.RoundTrip(req.WithContext(ctx))
	}
	type answer struct {
		resp   *http.Response
		err    error
		cancel context.CancelFunc
	}
	answers := make(chan answer, 2)
	start := func(r *http.Request, isHedge bool) {
		actx, cancel := context.WithCancel(ctx)
		s.add(isHedge)
		go func() {
			resp, err := h.base.RoundTrip(r.WithContext(actx))
			answers <- answer{resp, err, cancel}
		}()
	}
	good := func(a answer) bool { return a.err == nil && !failed(h.shed.Classify(a.resp.StatusCode, "")) }
	// discard ends an answer nobody reads
	discard := func(a answer) {
		if a.resp != nil {
			_, _ = io.Copy(io.Discard, a.resp.Body)
			a.resp.Body.Close()
		}
		a.cancel()
	}
	win := func(a answer) (*http.Response, error) {
		if a.err != nil {
			a.cancel()
			return nil, a.err
		}
		a.resp.Body = cancelOnClose(a.resp.Body, a.cancel, true)
		return a.resp, nil
	}

	start(req, false)
	timer := time.NewTimer(h.hedge)
	select {
	case a := <-answers:
		timer.Stop()
		return win(a)
	case <-timer.C:
	}
	start(h.toNextReplica(req), true)
	first := <-answers
	if good(first) {
		go func() { second := <-answers; second.cancel(); discard(second) }()
		return win(first)
	}
	second := <-answers
	if good(second) {
		discard(first)
		return win(second)
	}
	discard(first)
	return win(second)
}

// rewound is req for its attempt n: from the second on, with its body
// from the start again (the first attempt read it). A request without a
// body is itself.
func rewound(req *http.Request, n int) *http.Request {
	if n == 0 || req.GetBody == nil || req.Body == nil || req.Body == http.NoBody {
		return req
	}
	r := req.WithContext(req.Context())
	if b, err := req.GetBody(); err == nil {
		r.Body = b
	}
	return r
}

// toNextReplica is req sent to the replica after its own, with its body
// from the start: the first copy is reading it.
func (h *herd) toNextReplica(req *http.Request) *http.Request {
	r := rewound(req.Clone(req.Context()), 1)
	for i, t := range h.targets {
		if u, err := url.Parse(t); err == nil && u.Host == req.URL.Host {
			next, _ := url.Parse(h.targets[(i+1)%len(h.targets)])
			r.URL.Scheme, r.URL.Host, r.Host = next.Scheme, next.Host, ""
			break
		}
	}
	return r
}

// cancelOnClose is body, ending an attempt's context when it is closed;
// without an attempt context of its own (needed false), body itself.
func cancelOnClose(body io.ReadCloser, cancel context.CancelFunc, needed bool) io.ReadCloser {
	if !needed {
		return body
	}
	return &cancelingBody{ReadCloser: body, cancel: cancel}
}

type cancelingBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelingBody) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
