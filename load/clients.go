package load

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/herdbench/herdbench/retry"
)

// requestParam carries a request's id in its URL, so the transport finds
// its virtual client and the attack loop its attempts. Servers ignore it.
const requestParam = "hb"

// herd is the virtual clients behind one transport: request id i belongs to
// client mix(i) % len(clients), which keeps its own backoff state and
// budget, as separate processes would. The hash keeps which client sends a
// request independent of when it is sent: with i % K, a server that admits
// every n-th request would admit the same few clients every time.
type herd struct {
	base    *http.Transport
	timeout time.Duration // per attempt
	clients []*client

	mu       sync.Mutex
	attempts map[uint64][]time.Time // request id -> when each attempt left, until the result is read
}

type client struct {
	mu       sync.Mutex
	backoff  *retry.Backoff
	budget   *retry.Spender
	throttle *retry.Throttle // nil: off
	rng      *rand.Rand
}

// errThrottled ends an attempt the client refused itself.
var errThrottled = errors.New("herdbench: throttled by the client (adaptive throttling)")

func newHerd(c Config) *herd {
	n := max(c.Clients, 1)
	h := &herd{
		base: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: c.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 10_000, // as vegeta's default: connections are reused, not a limit
			IdleConnTimeout:     90 * time.Second,
		},
		timeout:  c.Timeout,
		clients:  make([]*client, n),
		attempts: map[uint64][]time.Time{},
	}
	for i := range h.clients {
		rng := rand.New(rand.NewPCG(c.Seed, uint64(i)))
		h.clients[i] = &client{backoff: retry.NewBackoff(c.Retry, rng), budget: retry.NewSpender(c.Budget), rng: rng}
		if c.Throttle > 0 {
			h.clients[i].throttle = retry.NewThrottle(c.Throttle)
		}
	}
	return h
}

// RoundTrip sends one request with its client's retry policy: each attempt
// gets the timeout, failed attempts (no response, 5xx, 429) are retried
// after the policy's delay while retries and budget last, and the last
// attempt's response is returned.
func (h *herd) RoundTrip(req *http.Request) (*http.Response, error) {
	id, _ := strconv.ParseUint(req.URL.Query().Get(requestParam), 10, 64)
	c := h.clients[mix(id)%uint64(len(h.clients))]
	c.mu.Lock()
	c.budget.Request(time.Now())
	c.mu.Unlock()
	var prev time.Duration // this request's last wait
	lastCost := 0          // what this request's last retry cost its budget
	for n := 0; ; n++ {
		h.mu.Lock()
		h.attempts[id] = append(h.attempts[id], time.Now())
		h.mu.Unlock()
		actx, cancel := context.WithTimeout(req.Context(), h.timeout)
		var resp *http.Response
		var err error
		c.mu.Lock()
		refused := c.throttle != nil && c.throttle.Reject(time.Now(), c.rng.Float64())
		c.mu.Unlock()
		if refused {
			err = errThrottled
		} else {
			resp, err = h.base.RoundTrip(req.Clone(actx))
		}
		code, msg := 0, ""
		if err != nil {
			msg = err.Error()
		} else {
			code = resp.StatusCode
		}
		outcome := Classify(code, msg)
		c.mu.Lock()
		if c.throttle != nil && !refused && outcome != Shed && outcome != Conn && outcome != Timeout {
			c.throttle.Accepted(time.Now())
		}
		retryable := outcome != OK && outcome != Other && outcome != Throttled && n < c.backoff.Retries()
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
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
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

// takeAttempts returns and forgets when request id's attempts left.
func (h *herd) takeAttempts(id uint64) []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	at := h.attempts[id]
	delete(h.attempts, id)
	return at
}

// cancelOnClose ends an attempt's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
