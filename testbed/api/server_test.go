package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// newUnconnected returns a replica whose dependencies are never dialed: the
// admin API and input validation need neither.
func newUnconnected(t *testing.T) *httptest.Server {
	t.Helper()
	opts := replica.DefaultOptions
	opts.RedisAddr = "127.0.0.1:1"
	opts.PostgresDSN = "postgres://nobody@127.0.0.1:1/none?sslmode=disable"
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdminConfigValidation(t *testing.T) {
	srv := newUnconnected(t)
	tests := []struct {
		name, body string
		wantCode   int
		wantBody   []string
	}{
		{"unknown strategy", `{"strategy":"magic"}`, 400, []string{`unknown \"magic\"`, "none, singleflight, lock, xfetch, swr, lease, early, ttl_jitter, local"}},
		{"two loaders", `{"strategy":"lock+singleflight"}`, 400, []string{"at most one of singleflight, lock, xfetch"}},
		{"jitter out of range", `{"ttl_jitter":2}`, 400, []string{"ttl_jitter: 2 out of range (accepted: 0 to 1"}},
		{"beta zero", `{"xfetch_beta":0}`, 400, []string{"xfetch_beta"}},
		{"bad duration", `{"ttl":"forever"}`, 400, []string{`invalid duration \"forever\"`}},
		{"wrong type", `{"ttl_jitter":"lots"}`, 400, []string{"ttl_jitter: want float64"}},
		{"unknown field", `{"colour":"red"}`, 400, []string{`unknown field \"colour\"`, "accepted: abandoned_load, apply_rate, breaker_failures, breaker_open"}},
		{"not json", `strategy=lock`, 400, []string{"invalid config"}},
		{"two problems at once", `{"strategy":"magic","ttl_jitter":-1}`, 400, []string{"strategy:", "ttl_jitter:"}},
		{"valid", `{"strategy":"lock+ttl_jitter","ttl":"5s"}`, 200, []string{`"strategy":"lock+ttl_jitter"`, `"ttl":"5s"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := do(t, http.MethodPut, srv.URL+"/admin/config", tt.body)
			if code != tt.wantCode {
				t.Fatalf("PUT /admin/config %s = %d %s; want %d", tt.body, code, body, tt.wantCode)
			}
			for _, w := range tt.wantBody {
				if !strings.Contains(body, w) {
					t.Errorf("PUT /admin/config %s = %s; want it to contain %s", tt.body, body, w)
				}
			}
		})
	}
}

func TestAdminConfigPutStartsFromStartupValues(t *testing.T) {
	srv := newUnconnected(t)
	do(t, http.MethodPut, srv.URL+"/admin/config", `{"strategy":"xfetch","xfetch_beta":3}`)
	do(t, http.MethodPut, srv.URL+"/admin/config", `{"strategy":"lock"}`)
	code, body := do(t, http.MethodGet, srv.URL+"/admin/config", "")
	var got replica.Config
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("GET /admin/config = %d %s (%v)", code, body, err)
	}
	want := replica.DefaultConfig
	want.Strategy = replica.Lock
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after PUT xfetch(beta 3) then PUT lock, config = %+v; want %+v (omitted fields take start-up values)", got, want)
	}
}

func TestInvalidItemID(t *testing.T) {
	srv := newUnconnected(t)
	for _, id := range []string{"abc", "0", "-3", "1.5"} {
		code, body := do(t, http.MethodGet, srv.URL+"/items/"+id, "")
		if code != 400 || !strings.Contains(body, "positive integer") {
			t.Errorf("GET /items/%s = %d %s; want 400 naming a positive integer", id, code, body)
		}
	}
	_, metrics := do(t, http.MethodGet, srv.URL+"/metrics", "")
	if !strings.Contains(metrics, `herdbench_api_requests_total{outcome="invalid"} 4`) {
		t.Errorf("/metrics does not count 4 invalid requests:\n%s", grepLines(metrics, "requests_total"))
	}
	if code, _ := do(t, http.MethodPost, srv.URL+"/items/1", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /items/1 = %d; want 405", code)
	}
}

func TestResetZeroesCounters(t *testing.T) {
	srv := newUnconnected(t)
	do(t, http.MethodGet, srv.URL+"/items/x", "")
	if code, _ := do(t, http.MethodPost, srv.URL+"/admin/reset", ""); code != http.StatusNoContent {
		t.Fatalf("POST /admin/reset = %d; want 204", code)
	}
	_, metrics := do(t, http.MethodGet, srv.URL+"/metrics", "")
	if !strings.Contains(metrics, `herdbench_api_requests_total{outcome="invalid"} 0`) {
		t.Errorf("after reset, /metrics still counts the invalid request:\n%s", grepLines(metrics, "requests_total"))
	}
}

func TestMetricsLint(t *testing.T) {
	var n0 atomic.Int64
	g := gauges{loads: &n0, busy: &n0, shedLimit: func() float64 { return 0 }}
	problems, err := testutil.GatherAndLint(newMetrics(replica.DefaultMitigations(), g).reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	mfs, _ := newMetrics(replica.DefaultMitigations(), g).reg.Gather()
	n := 0
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "herdbench_api_") {
			n++
		}
	}
	if n != 23 {
		t.Errorf("gathered %d herdbench_api_* families; want 23", n)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestResetSeeds(t *testing.T) {
	srv := newUnconnected(t)
	if code, body := do(t, http.MethodPost, srv.URL+"/admin/reset", `{"seed": 9}`); code != http.StatusNoContent {
		t.Fatalf(`POST /admin/reset {"seed": 9} = %d %s; want 204`, code, body)
	}
	if _, body := do(t, http.MethodGet, srv.URL+"/healthz", ""); !strings.Contains(body, `"seed":9`) {
		t.Errorf("/healthz after a reset with seed 9 = %s; want seed 9", body)
	}
	// the pool and the deadline the model's predictions read (package predict)
	if _, body := do(t, http.MethodGet, srv.URL+"/healthz", ""); !strings.Contains(body, `"db_timeout_ms":5000`) || !strings.Contains(body, `"db_pool":10`) {
		t.Errorf("/healthz = %s; want the replica's --db-timeout (5000 ms) and --db-pool (10)", body)
	}
	if code, body := do(t, http.MethodPost, srv.URL+"/admin/reset", `{"sead": 9}`); code != 400 || !strings.Contains(body, `{\"seed\": N}`) {
		t.Errorf(`POST /admin/reset {"sead": 9} = %d %s; want 400 naming the accepted body`, code, body)
	}
}

func TestStrategyHeaderIsChecked(t *testing.T) {
	srv := newUnconnected(t)
	for _, tt := range []struct {
		header, want string
	}{
		{"bogus", `unknown \"bogus\"`},
		{"shed", `\"shed\" needs the replica configured with shed`},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items/1", nil)
		req.Header.Set(admin.StrategyHeader, tt.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
			t.Errorf("GET /items/1 with %s: %s = %d %s; want 400 saying %s", admin.StrategyHeader, tt.header, resp.StatusCode, b, tt.want)
		}
	}
}

// A load started in the background counts as busy from the moment it is
// started, before its goroutine runs, until it returns: a drain that sees
// busy 0 has no load left to start.
func TestBackgroundWorkIsBusyUntilItReturns(t *testing.T) {
	var s Server
	release, ran := make(chan struct{}), make(chan struct{})
	s.background(func() { close(ran); <-release })
	if n := s.busy.Load(); n != 1 {
		t.Fatalf("busy right after background() = %d; want 1", n)
	}
	<-ran
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for s.busy.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("busy = %d 5s after the work returned; want 0", s.busy.Load())
		}
		runtime.Gosched()
	}
}
