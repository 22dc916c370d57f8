package edge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
)

// upstream is a B that answers each call with answer(n), n counting its
// calls from 1, and counts them itself: the edge's attempts counter is
// tied to what B received.
type upstream struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newUpstream(t *testing.T, answer func(n int64, w http.ResponseWriter, r *http.Request)) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(u.calls.Add(1), w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func newEdge(t *testing.T, o Options) (*Edge, *httptest.Server) {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(srv.Close)
	return e, srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func parsePolicy(t *testing.T, s string) retry.Policy {
	t.Helper()
	p, err := retry.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A B that fails every call: each client request becomes 1 + N attempts
// downstream, the amplification of one layer, and the edge's counters say
// so as B counted it.
func TestRetriesMultiplyWhatReachesTheLayerBelow(t *testing.T) {
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL}, Config: Config{Timeout: herd.Duration(time.Second), Retry: parsePolicy(t, "immediate:2")}})
	const requests = 10
	for range requests {
		if code, body := get(t, srv.URL+"/items/7"); code != http.StatusBadGateway {
			t.Fatalf("GET /items/7 with B failing: %d %s; want 502", code, body)
		}
	}
	if got := testutil.ToFloat64(e.m.attempts); got != 3*requests || int64(got) != b.calls.Load() {
		t.Errorf("attempts %g, B received %d; want %d each (1 + 2 retries per request)", got, b.calls.Load(), 3*requests)
	}
	if got := testutil.ToFloat64(e.m.requests.WithLabelValues(OutcomeFailed)); got != requests {
		t.Errorf("requests failed %g; want %d", got, requests)
	}
	if got := testutil.ToFloat64(e.m.failures.WithLabelValues(ReasonStatus)); got != 3*requests {
		t.Errorf("failures by status %g; want %d", got, 3*requests)
	}
}

// A retry budget bounds the retries over all of the edge's requests, not
// per request: with a 10% ratio, 100 failing requests send at most about
// 10 retries.
func TestBudgetBoundsTheLayersRetries(t *testing.T) {
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	budget, err := retry.ParseBudget("10%")
	if err != nil {
		t.Fatal(err)
	}
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL}, Config: Config{Timeout: herd.Duration(time.Second), Retry: parsePolicy(t, "immediate:3"), Budget: budget}})
	const requests = 100
	for range requests {
		get(t, srv.URL+"/items/1")
	}
	attempts := testutil.ToFloat64(e.m.attempts)
	if int64(attempts) != b.calls.Load() || attempts < requests || attempts > requests*1.1+1 {
		t.Errorf("attempts %g, B received %d; want from %d to %d (a 10%% budget)", attempts, b.calls.Load(), requests, requests*11/10+1)
	}
	refused := testutil.ToFloat64(e.m.requests.WithLabelValues(OutcomeBudget))
	failed := testutil.ToFloat64(e.m.requests.WithLabelValues(OutcomeFailed))
	if refused+failed != requests || refused < requests*8/10 {
		t.Errorf("requests refused a retry by the budget %g, failed after every retry %g; want %d in all, most refused", refused, failed, requests)
	}
}

// An attempt that outlasts the edge's timeout counts as a timeout and is
// retried; B's answer, a 404 included, goes back to the client as it was.
func TestTimeoutIsRetriedAndAnswersPassThrough(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b := newUpstream(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 { // the first call hangs until the edge gives up on it
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"item 9 not found"}`)
	})
	e, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL}, Config: Config{Timeout: herd.Duration(50 * time.Millisecond), Retry: parsePolicy(t, "immediate:1")}})
	code, body := get(t, srv.URL+"/items/9")
	if code != http.StatusNotFound || body != `{"error":"item 9 not found"}` {
		t.Errorf("GET /items/9 = %d %s; want B's 404 and body", code, body)
	}
	if a, to := testutil.ToFloat64(e.m.attempts), testutil.ToFloat64(e.m.failures.WithLabelValues(ReasonTimeout)); a != 2 || to != 1 {
		t.Errorf("attempts %g, timeouts %g; want 2 and 1", a, to)
	}
	if ok := testutil.ToFloat64(e.m.requests.WithLabelValues(OutcomeOK)); ok != 1 {
		t.Errorf("requests ok %g; want 1", ok)
	}
}

// Bad options are refused, saying what is accepted.
func TestNewRefusesBadOptions(t *testing.T) {
	up := []string{"http://127.0.0.1:1"}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Config: Config{Timeout: herd.Duration(time.Second)}}, "no upstream"},
		{Options{Upstreams: up, Config: Config{Timeout: herd.Duration(time.Hour)}}, "timeout: 1h0m0s out of range (accepted: 1ms to 1m)"},
		{Options{Upstreams: up, Config: Config{Bulkhead: -1}}, "bulkhead: -1 out of range"},
		{Options{Upstreams: up, Config: Config{Deadline: -1}}, "deadline: -1ns out of range"},
	} {
		if _, err := New(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %v; want an error saying %q", c.o, err, c.want)
		}
	}
}

// A request's own strategy and priority headers reach B with it.
func TestForwardsTheRequestsStrategyAndPriority(t *testing.T) {
	var got http.Header
	b := newUpstream(t, func(_ int64, w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() })
	_, srv := newEdge(t, Options{Name: "a1", Upstreams: []string{b.srv.URL}, Config: Config{Timeout: herd.Duration(time.Second)}})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items/3", nil)
	req.Header.Set(admin.StrategyHeader, "lock")
	req.Header.Set(admin.PriorityHeader, admin.PriorityCritical)
	req.Header.Set("X-Other", "kept out")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get(admin.StrategyHeader) != "lock" || got.Get(admin.PriorityHeader) != admin.PriorityCritical || got.Get("X-Other") != "" {
		t.Errorf("B received %v; want the strategy and priority headers only", got)
	}
}
