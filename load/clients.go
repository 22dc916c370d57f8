package load

import (
	"context"
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
// client i % len(clients), which keeps its own backoff state and budget, as
// separate processes would.
type herd struct {
	base    *http.Transport
	timeout time.Duration // per attempt
	clients []*client

	mu       sync.Mutex
	attempts map[uint64][]time.Time // request id -> when each attempt left, until the result is read
}

type client struct {
	mu      sync.Mutex
	backoff *retry.Backoff
	budget  *retry.Spender
}

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
		h.clients[i] = &client{backoff: retry.NewBackoff(c.Retry, rng), budget: retry.NewSpender(c.Budget)}
	}
	return h
}

// RoundTrip sends one request with its client's retry policy: each attempt
// gets the timeout, failed attempts (no response, 5xx, 429) are retried
// after the policy's delay while retries and budget last, and the last
// attempt's response is returned.
func (h *herd) RoundTrip(req *http.Request) (*http.Response, error) {
	id, _ := strconv.ParseUint(req.URL.Query().Get(requestParam), 10, 64)
	c := h.clients[id%uint64(len(h.clients))]
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
		resp, err := h.base.RoundTrip(req.Clone(actx))
		code, msg := 0, ""
		if err != nil {
			msg = err.Error()
		} else {
			code = resp.StatusCode
		}
		outcome := Classify(code, msg)
		c.mu.Lock()
		retryable := outcome != OK && outcome != Other && n < c.backoff.Retries()
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
