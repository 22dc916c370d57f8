package runs

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
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
// second back. Its return's figures tell the two apart, as a gate does
// (full_share_ms under a second for the step, over two for the ramp),
// and they are HAProxy's: the test reads its stats page apart every
// 50 ms through the run, and the rows' weights are the page's, the first
// second's attempts its stot's growth from the return, the share its
// uweights'. The ramp's arm runs 7 s after T, so that its full share (3 s
// or so after its return, 1.3 s after T) has its whole second in the arm.
func TestAReturningServersHerdShowsPerServer(t *testing.T) {
	for _, tt := range []struct {
		slowstart, after, gate string
		ramp                   bool
	}{{"", "5s", "lb.servers.api-0.return.full_share_ms < 1000", false}, {"4s", "7s", "lb.servers.api-0.return.full_share_ms > 2000", true}} {
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
			polls := pollHAProxy(t, stats, "api-0")
			code, stdout, stderr := clitest.Run(t, nil, "stampede", "--target", target, "--arms", "baseline", "--trigger", "command", "--run", run,
				"--command-timeout", "3s", "--ended-when", "lb:api-0", "--rate", "200", "--warmup", "0s", "--before", "2s", "--after", tt.after,
				"--gate", tt.gate, "--seed", "3", "--results-dir", out, "-o", "json="+jsonFile, "--state-dir", t.TempDir())
			page := polls()
			t.Logf("stampede:\n%s%s", stdout, stderr)
			if code != clitest.ExitOK {
				t.Fatalf("stampede --gate %q = exit %d; want 0, the gate held", tt.gate, code)
			}
			a := clitest.ReadResults(t, jsonFile).Arms[0]
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
			returnIsAStepOrARamp(t, a.LB.Servers["api-0"].Return, before, tt.ramp)
			returnIsHAProxys(t, a, page, cachetest.HAProxyPage(t, stats))
			serverFiguresAreHAProxys(t, a.LB, stats, tt.ramp)
		})
	}
}

// returnIsAStepOrARamp tells the step from the ramp by api-0's return's
// figures alone: a step takes 60% or more of its share (before, its
// attempts in the second before T) in its first second back and reaches
// 90% of it at once; slowstart's ramp takes under 30% of it then, and
// reaches it two seconds or more later.
func returnIsAStepOrARamp(t *testing.T, ret *result.LBReturn, before int64, ramp bool) {
	t.Helper()
	if ret == nil || ret.FullShareMS == nil {
		t.Fatalf("api-0's return %+v; want one, with its full share reached", ret)
	}
	t.Logf("api-0's return: back_ms %d, first_second_rps %g, share %g, full_share_ms %d", ret.BackMS, ret.FirstSecondRPS, ret.Share, *ret.FullShareMS)
	full := *ret.FullShareMS
	if !ramp && (ret.FirstSecondRPS < 0.6*float64(before) || full > 500) {
		t.Errorf("no slowstart: first_second_rps %g, full_share_ms %d; want a step: 60%% or more of the %d before T, its share within 500 ms",
			ret.FirstSecondRPS, full, before)
	}
	if ramp && (ret.FirstSecondRPS > 0.3*float64(before) || full < 2000) {
		t.Errorf("slowstart: first_second_rps %g, full_share_ms %d; want a ramp: under 30%% of the %d before T, its share 2 s or more later",
			ret.FirstSecondRPS, full, before)
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
			code, stdout, stderr := clitest.Run(t, nil, "stampede", "--target", target, "--arms", "baseline", "--trigger", "command", "--run", "true",
				"--command-timeout", "1s", "--ended-when", "lb:"+c.server, "--rate", "50", "--warmup", "0s", "--before", "1s", "--after", "2s",
				"--results-dir", t.TempDir(), "--state-dir", t.TempDir())
			if code != 1 || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("stampede --ended-when lb:%s = exit %d, %s%s; want exit 1 naming %q", c.server, code, stdout, stderr, c.want)
			}
		})
	}
}

// haproxyPoll is one reading of a server's row on HAProxy's stats page by
// the test, apart from herdbench's: between start and end, HAProxy listed
// it status, with weight and stot.
type haproxyPoll struct {
	start, end   time.Time
	status       string
	weight, stot int64
}

// pollHAProxy reads server's row on HAProxy's stats page every 50 ms until
// the function it returns is called, which returns the readings.
func pollHAProxy(t *testing.T, stats, server string) func() []haproxyPoll {
	done, got := make(chan struct{}), make(chan []haproxyPoll, 1)
	go func() {
		var polls []haproxyPoll
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			start := time.Now()
			if page, err := cachetest.HAProxyText(stats); err == nil && page[server] != nil {
				row := page[server]
				num := func(col string) int64 { n, _ := strconv.ParseInt(row[col], 10, 64); return n }
				polls = append(polls, haproxyPoll{start: start, end: time.Now(), status: row["status"], weight: num("weight"), stot: num("stot")})
			}
			select {
			case <-done:
				got <- polls
				return
			case <-tick.C:
			}
		}
	}()
	var stop sync.Once
	t.Cleanup(func() { stop.Do(func() { close(done) }) })
	return func() []haproxyPoll {
		stop.Do(func() { close(done) })
		return <-got
	}
}

// returnIsHAProxys ties api-0's return to HAProxy's stats page as the test
// read it apart (polls, and end after the arm): its return is the first
// poll listing it UP after one listing it otherwise. The rows' weight at
// back_ms is the weight that poll read, and every weight the rows give it
// one the page listed while UP, never falling from its return; share is
// its uweight over the backend's (the UP servers' summed); its back_ms and
// first second are the page's (backIsHAProxys).
func returnIsHAProxys(t *testing.T, a result.ArmResult, polls []haproxyPoll, end map[string]map[string]int64) {
	t.Helper()
	ret := a.LB.Servers["api-0"].Return
	backs := pollReturns(polls, a.T)
	if len(backs) == 0 {
		t.Fatalf("the test's %d readings of HAProxy's page never list api-0 down after T, then UP", len(polls))
	}
	up := backs[0][1]
	listed := map[int64]bool{}
	for _, p := range polls[up:] {
		listed[p.weight] = listed[p.weight] || strings.HasPrefix(p.status, "UP")
	}
	var last int64
	for _, r := range a.Timeline {
		w, ok := r.LBWeights["api-0"]
		if !ok || r.TMS < ret.BackMS {
			continue
		}
		switch {
		case r.TMS == ret.BackMS && w != polls[up].weight:
			t.Errorf("api-0's weight on its return's row (%d ms) %d; HAProxy's page listed %d when the test first read it UP", r.TMS, w, polls[up].weight)
		case !listed[w] || w < last:
			t.Errorf("api-0's weight %d at %d ms (%d before); want one HAProxy's page listed it UP with (%v), never falling", w, r.TMS, last, listed)
		}
		last = max(last, w)
	}
	if want := end["api-0"]["uweight"] * 10000 / end["BACKEND"]["uweight"]; int64(ret.Share*10000) != want {
		t.Errorf("api-0's share %g; HAProxy's uweight %d over the backend's %d", ret.Share, end["api-0"]["uweight"], end["BACKEND"]["uweight"])
	}
	backIsHAProxys(t, a, *ret, polls, backs[0])
}

// pollReturns are api-0's returns from T as the test read HAProxy's page:
// each the index of the last poll listing it otherwise (after T) and of
// the first listing it UP after it.
func pollReturns(polls []haproxyPoll, t0 time.Time) [][2]int {
	var backs [][2]int
	down := -1
	for i, p := range polls {
		switch {
		case p.status == "UP" && down >= 0:
			backs, down = append(backs, [2]int{down, i}), -1
		case !strings.HasPrefix(p.status, "UP") && p.start.After(t0):
			down = i
		}
	}
	return backs
}

// backIsHAProxys ties one return of api-0 to the polls of HAProxy's page
// around it (its down poll and its UP one): the first second's attempts
// are its stot's growth from the down poll (no attempt reaches a server
// while it is down) to a poll before the tenth row's end at least, and to
// one after it at most, the reading's 250 ms bound beside it; back_ms
// lies between the two polls, the same bound and one row of the sampler
// beside it, and 400 ms more for a late sample.
func backIsHAProxys(t *testing.T, a result.ArmResult, ret result.LBReturn, polls []haproxyPoll, back [2]int) {
	t.Helper()
	down, up := back[0], back[1]
	tenth := a.T.Add(time.Duration(ret.BackMS+1000) * time.Millisecond)
	lo, hi := polls[down].stot, int64(-1)
	for _, p := range polls {
		if !p.end.After(tenth.Add(-200 * time.Millisecond)) {
			lo = max(lo, p.stot)
		}
		if hi < 0 && !p.start.Before(tenth.Add(observe.LBReadLimit)) {
			hi = p.stot
		}
	}
	n := int64(ret.FirstSecondRPS + 0.5)
	t.Logf("api-0 back at %d ms: %d attempts in its first second back; HAProxy's stot grew %d to %d over it, read apart", ret.BackMS, n, lo-polls[down].stot, hi-polls[down].stot)
	if hi < 0 || n < lo-polls[down].stot || n > hi-polls[down].stot {
		t.Errorf("api-0's first second back: %d attempts; HAProxy's stot, read apart, grew %d to %d from its down reading over it", n, lo-polls[down].stot, hi-polls[down].stot)
	}
	at := a.T.Add(time.Duration(ret.BackMS) * time.Millisecond)
	if at.Add(100*time.Millisecond+observe.LBReadLimit).Before(polls[down].start) || at.After(polls[up].end.Add(500*time.Millisecond)) {
		t.Errorf("api-0 back at %d ms from T; HAProxy's page, read apart, listed it down at %d ms and UP at %d ms",
			ret.BackMS, polls[down].start.Sub(a.T).Milliseconds(), polls[up].end.Sub(a.T).Milliseconds())
	}
}
