package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/cachetest"
)

// origin is a server behind the load balancer that goes away when a file
// named gone appears and comes back, on the same address, when one named
// back does: the command trigger makes both, as a user's restart would.
type origin struct {
	addr string
	mu   sync.Mutex
	srv  *http.Server
}

func startOrigin(t *testing.T, dir string) *origin {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &origin{addr: ln.Addr().String()}
	o.serve(ln)
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		o.mu.Lock()
		defer o.mu.Unlock()
		o.srv.Close()
	})
	go func() { // the files are the trigger's: polled, as a process would be restarted
		gone, back := filepath.Join(dir, "gone"), filepath.Join(dir, "back")
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := os.Stat(gone); err == nil {
				o.mu.Lock()
				o.srv.Close()
				o.mu.Unlock()
				os.Remove(gone)
			}
			if _, err := os.Stat(back); err == nil {
				if ln, err := net.Listen("tcp", o.addr); err == nil {
					o.serve(ln)
					os.Remove(back)
				}
			}
		}
	}()
	return o
}

func (o *origin) serve(ln net.Listener) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })}
	go o.srv.Serve(ln)
}

// One server's herd behind a real HAProxy: api-0 goes away at T and comes
// back a second later; the command trigger ends when HAProxy lists it UP
// again (--ended-when lb:api-0), and the timeline's per-server rows show
// what it took on its return: without slowstart its full share at once,
// with slowstart 4s a ramp, at most a fraction of its share in its first
// second back.
func TestAReturningServersHerdShowsPerServer(t *testing.T) {
	for _, tt := range []struct {
		slowstart string
		ramp      bool
	}{{"", false}, {"4s", true}} {
		t.Run("slowstart="+tt.slowstart, func(t *testing.T) {
			dir := t.TempDir()
			api0, api1 := startOrigin(t, dir), startOrigin(t, t.TempDir())
			base, stats := cachetest.HAProxyChecked(t, []string{api0.addr, api1.addr}, 3, tt.slowstart)
			target := filepath.Join(dir, "lb.yaml")
			yaml := fmt.Sprintf("endpoints: [%s]\nrequest: {path: \"/items/{key}\"}\nkeys: {range: {from: 1, to: 100}, hot: 1}\nhaproxy: {stats: %q, backend: api}\n", base, stats)
			if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			jsonFile := filepath.Join(out, "r.json")
			run := fmt.Sprintf("touch %s && sleep 1 && touch %s", filepath.Join(dir, "gone"), filepath.Join(dir, "back"))
			code, stdout, stderr := herdbench(t, "stampede", "--target", target, "--arms", "baseline", "--trigger", "command", "--run", run,
				"--command-timeout", "3s", "--ended-when", "lb:api-0", "--rate", "200", "--warmup", "0s", "--before", "2s", "--after", "5s",
				"--seed", "3", "--results-dir", out, "-o", "json="+jsonFile, "--state-dir", t.TempDir())
			t.Logf("stampede:\n%s%s", stdout, stderr)
			if code != exitOK {
				t.Fatalf("stampede = exit %d", code)
			}
			a := readResults(t, jsonFile).Arms[0]
			ended := a.Trigger.EndedMS
			if a.LB == nil || ended == nil || *ended < 1000 {
				t.Fatalf("lb %v, the trigger's end %v ms; want HAProxy read and api-0 UP again after the command's second away", a.LB, ended)
			}
			var before, first int64 // api-0's attempts in the second before T, and in its first second UP again
			for _, r := range a.Timeline {
				switch {
				case r.TMS >= -1000 && r.TMS < 0:
					before += r.LBServers["api-0"]
				case r.TMS >= *ended && r.TMS < *ended+1000:
					first += r.LBServers["api-0"]
				}
			}
			t.Logf("api-0: %d attempts in the second before T, %d in its first second UP again (at %d ms)", before, first, *ended)
			if before < 50 {
				t.Fatalf("api-0 took %d attempts in the second before T; want about its half of 200", before)
			}
			if tt.ramp && first*100 > before*45 {
				t.Errorf("slowstart %s: api-0 took %d attempts in its first second back, %d a second before T; want a ramp, under 45%% of its share",
					tt.slowstart, first, before)
			}
			if !tt.ramp && first*100 < before*60 {
				t.Errorf("no slowstart: api-0 took %d attempts in its first second back, %d a second before T; want its share at once, 60%% or more",
					first, before)
			}
			serverFiguresAreHAProxys(t, a.LB, stats, tt.ramp)
		})
	}
}

// serverFiguresAreHAProxys ties lb.* to HAProxy's own stats page, read
// after the arm (its load over, the counters still): api-0 was healthy
// before T, so what its counters hold now is what they grew by from T.
// Its checks marked it down (downs), its refused connections (conn_errors)
// and the backend's redispatches are HAProxy's; its weight is the page's,
// or, while slowstart still ramps it, at most the page's.
func serverFiguresAreHAProxys(t *testing.T, lb *result.LoadBalancer, stats string, ramp bool) {
	t.Helper()
	page := cachetest.HAProxyPage(t, stats)
	s, row := lb.Servers["api-0"], page["api-0"]
	if s == nil || row == nil {
		t.Fatalf("api-0: results %+v, HAProxy's row %v; want both", s, row)
	}
	t.Logf("api-0: downs %d, conn_errors %d, responses_5xx %d, weight %d; lb.redispatches %d (HAProxy's: chkdown %d, econ %d, hrsp_5xx %d, weight %d; wredis %d)",
		s.Downs, s.ConnErrors, s.Responses5xx, s.Weight, lb.Redispatches, row["chkdown"], row["econ"], row["hrsp_5xx"], row["weight"], page["BACKEND"]["wredis"])
	if s.Downs < 1 || s.Downs != row["chkdown"] {
		t.Errorf("api-0: downs %d; HAProxy's chkdown %d, want the same, 1 or more (it went away)", s.Downs, row["chkdown"])
	}
	if s.ConnErrors != row["econ"] || s.Responses5xx != row["hrsp_5xx"] {
		t.Errorf("api-0: conn_errors %d, responses_5xx %d; HAProxy's econ %d, hrsp_5xx %d", s.ConnErrors, s.Responses5xx, row["econ"], row["hrsp_5xx"])
	}
	if lb.Redispatches != page["BACKEND"]["wredis"] {
		t.Errorf("lb.redispatches %d; HAProxy's backend wredis %d", lb.Redispatches, page["BACKEND"]["wredis"])
	}
	if w := row["weight"]; s.Weight > w || (!ramp && s.Weight != w) || s.Weight < 1 {
		t.Errorf("api-0: weight %d at the arm's end; HAProxy's %d now (slowstart ramping: %v)", s.Weight, w, ramp)
	}
}

// An end probe that could never end fails the arm before its load: a
// server the load balancer does not list, or one it lists and does not
// check (HAProxy never marks it down, nor UP again).
func TestAnEndProbeThatCannotEndFails(t *testing.T) {
	dir := t.TempDir()
	api0 := startOrigin(t, dir)
	checked, checkedStats := cachetest.HAProxyChecked(t, []string{api0.addr}, 0, "")
	unchecked, uncheckedStats := cachetest.HAProxy(t, []string{api0.addr}, 0)
	for _, c := range []struct {
		name, base, stats, server, want string
	}{
		{"a server HAProxy lacks", checked, checkedStats, "api-9", "has no server api-9 (accepted: api-0)"},
		{"a server HAProxy does not check", unchecked, uncheckedStats, "api-0", `HAProxy does not check api-0 (status "no check")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "lb.yaml")
			yaml := fmt.Sprintf("endpoints: [%s]\nrequest: {path: \"/items/{key}\"}\nkeys: {range: {from: 1, to: 100}, hot: 1}\nhaproxy: {stats: %q, backend: api}\n", c.base, c.stats)
			if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := herdbench(t, "stampede", "--target", target, "--arms", "baseline", "--trigger", "command", "--run", "true",
				"--command-timeout", "1s", "--ended-when", "lb:"+c.server, "--rate", "50", "--warmup", "0s", "--before", "1s", "--after", "2s",
				"--results-dir", t.TempDir(), "--state-dir", t.TempDir())
			if code != 1 || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("stampede --ended-when lb:%s = exit %d, %s%s; want exit 1 naming %q", c.server, code, stdout, stderr, c.want)
			}
		})
	}
}
