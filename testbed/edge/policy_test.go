package edge

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
)

func count(e *Edge, outcome string) float64 {
	return testutil.ToFloat64(e.m.requests.WithLabelValues(outcome))
}

// An open breaker refuses the calls to B at the edge: after 3 consecutive
// failures, the next requests cost B nothing.
func TestBreakerCutsTheCallsToB(t *testing.T) {
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL},
		Config: Config{Timeout: herd.Duration(time.Second), Breaker: retry.Breaker{Failures: 3, Open: time.Minute}}})
	for range 10 {
		get(t, srv.URL+"/items/1")
	}
	if b.calls.Load() != 3 || testutil.ToFloat64(e.m.attempts) != 3 {
		t.Errorf("B received %d calls, the edge counted %g attempts; want 3 each: the breaker opens after 3 failures", b.calls.Load(), testutil.ToFloat64(e.m.attempts))
	}
	if got := count(e, OutcomeBreaker); got != 7 {
		t.Errorf("requests refused by the breaker %g; want 7", got)
	}
	if code, body := get(t, srv.URL+"/items/1"); code != http.StatusServiceUnavailable || !strings.Contains(body, "breaker") {
		t.Errorf("a request with the breaker open: %d %s; want 503 naming the breaker", code, body)
	}
}

// A full bulkhead refuses a request at once, without calling B: with a
// bound of 2 and B holding every call, the third concurrent request is
// refused and B sees 2.
func TestBulkheadBoundsTheCallsInFlight(t *testing.T) {
	hold := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { arrived.Done(); <-hold })
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL}, Config: Config{Timeout: herd.Duration(time.Minute), Bulkhead: 2}})
	var done sync.WaitGroup
	for range 2 {
		done.Go(func() { get(t, srv.URL+"/items/1") })
	}
	arrived.Wait() // both permits are taken, the calls are in B
	code, body := get(t, srv.URL+"/items/1")
	close(hold)
	done.Wait()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "bulkhead") {
		t.Errorf("a third request with 2 calls in flight: %d %s; want 503 naming the bulkhead", code, body)
	}
	if b.calls.Load() != 2 || count(e, OutcomeBulkhead) != 1 || count(e, OutcomeOK) != 2 {
		t.Errorf("B received %d, refused %g, ok %g; want 2, 1, 2", b.calls.Load(), count(e, OutcomeBulkhead), count(e, OutcomeOK))
	}
}

// With a deadline, the edge passes the time left on to B, caps each
// attempt by it, and retries nothing past it: the caller's own shorter
// deadline wins.
func TestDeadlineIsPassedOnAndEndsTheRetries(t *testing.T) {
	var mu sync.Mutex
	var left []int64
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.ParseInt(r.Header.Get(admin.DeadlineHeader), 10, 64)
		mu.Lock()
		left = append(left, ms)
		mu.Unlock()
		<-r.Context().Done() // B hangs: only the deadline ends the request
	})
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL},
		Config: Config{Timeout: herd.Duration(time.Minute), Retry: parsePolicy(t, "immediate:5"), Deadline: herd.Duration(time.Minute)}})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items/1", nil)
	req.Header.Set(admin.DeadlineHeader, "300")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout || count(e, OutcomeExpired) != 1 {
		t.Errorf("a request whose 300ms passed: %d, expired %g; want 504 and 1", resp.StatusCode, count(e, OutcomeExpired))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(left) != 1 || left[0] > 300 || left[0] < 200 {
		t.Errorf("B was told %v ms left; want one attempt told from 200 to 300 (the caller's deadline, not the edge's minute)", left)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the request took %s; want it ended by the 300ms deadline, not the minute's timeout", took)
	}
}

// PUT /admin/config replaces the policy, starting from the edge's start-up
// values; a bad config is refused naming the field; POST /admin/reset
// zeroes the counters.
func TestAdminConfigAndReset(t *testing.T) {
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL}, Config: Config{Timeout: herd.Duration(time.Second)}})
	put := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/admin/config", bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.String()
	}
	if code, body := put(`{"retry": "immediate:2"}`); code != http.StatusOK || !strings.Contains(body, `"timeout":"1s"`) {
		t.Fatalf("PUT retry immediate:2: %d %s; want 200 and the start-up timeout kept", code, body)
	}
	get(t, srv.URL+"/items/1")
	if b.calls.Load() != 3 {
		t.Errorf("B received %d calls for one request under immediate:2; want 3", b.calls.Load())
	}
	if code, body := put(`{"bulkhead": -5}`); code != http.StatusBadRequest || !strings.Contains(body, "bulkhead: -5 out of range") {
		t.Errorf("PUT bulkhead -5: %d %s; want 400 naming the field and the range", code, body)
	}
	if code, body := put(`{"retires": "none"}`); code != http.StatusBadRequest || !strings.Contains(body, "accepted fields") {
		t.Errorf("PUT a misspelt field: %d %s; want 400 listing the accepted fields", code, body)
	}
	resp, err := http.Post(srv.URL+"/admin/reset", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || testutil.ToFloat64(e.m.attempts) != 0 || count(e, OutcomeFailed) != 0 {
		t.Errorf("after reset: %d, attempts %g, failed %g; want 204 and zeros", resp.StatusCode, testutil.ToFloat64(e.m.attempts), count(e, OutcomeFailed))
	}
}

// B's 504 under a propagated deadline is B saying the deadline passed (its
// copy, in whole milliseconds, ends a moment before the edge's): the edge
// ends the request there, expired, and does not retry into what is left.
// It once did, in the moment between B's answer and its own deadline.
func TestBsExpiredAnswerEndsTheRetries(t *testing.T) {
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusGatewayTimeout)
	})
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL},
		Config: Config{Timeout: herd.Duration(time.Minute), Retry: parsePolicy(t, "immediate:5"), Deadline: herd.Duration(time.Minute)}})
	if code, _ := get(t, srv.URL+"/items/1"); code != http.StatusGatewayTimeout || b.calls.Load() != 1 || count(e, OutcomeExpired) != 1 {
		t.Errorf("B answered 504: %d after %d calls to B, expired %g; want 504 after one call, expired 1", code, b.calls.Load(), count(e, OutcomeExpired))
	}
	// without a deadline, a 504 is a failure like any other, retried
	_, srv = newEdge(t, Options{Name: "a2", Upstreams: []string{b.srv.URL},
		Config: Config{Timeout: herd.Duration(time.Minute), Retry: parsePolicy(t, "immediate:2")}})
	b.calls.Store(0)
	if code, _ := get(t, srv.URL+"/items/1"); code != http.StatusBadGateway || b.calls.Load() != 3 {
		t.Errorf("B answered 504 with no deadline: %d after %d calls; want 502 after 3", code, b.calls.Load())
	}
}
