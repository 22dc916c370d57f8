package sweeps

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// latchServer is a service with a known tipping point. It holds every
// request for hold before answering 200; once more than limit requests
// are in flight at once it latches, and answers 503 to every request from
// then on: a state it cannot leave by itself, however long the load stays
// light. The burst trigger provokes it: burst=N puts N requests in flight
// at T, each held for hold, on top of the steady load's own (about rate ×
// hold, more when a busy machine's generator sends late requests together).
//
// The latch persists across runs, as a real fault would; what resets it is
// what would reset a real service between two experiments, the arm's
// before hook of the target file (run before every run of every probe):
// it creates the file reset, which the server removes, clearing the latch,
// on the next request. resets counts them, so the test can tell that every
// run began from the same state.
type latchServer struct {
	limit int64
	hold  time.Duration
	reset string // the file the before hook creates

	inFlight atomic.Int64
	latched  atomic.Bool
	resets   atomic.Int64
	mu       sync.Mutex // over the reset, and latches
	latches  []int64    // the in-flight count that latched it, each time
}

func (s *latchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// under the lock, so no request sees the marker gone and the latch
	// not yet cleared
	s.mu.Lock()
	if os.Remove(s.reset) == nil {
		s.latched.Store(false)
		s.resets.Add(1)
	}
	s.mu.Unlock()
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if n > s.limit && !s.latched.Swap(true) {
		s.mu.Lock()
		s.latches = append(s.latches, n)
		s.mu.Unlock()
	}
	if s.latched.Load() {
		http.Error(w, "latched", http.StatusServiceUnavailable)
		return
	}
	// hold the request, as a service doing work would; a client that
	// gave up ends it early
	select {
	case <-time.After(s.hold):
	case <-r.Context().Done():
	}
	fmt.Fprintf(w, `{"id":%q}`, strings.TrimPrefix(r.URL.Path, "/items/"))
}

// latchCount is how many times the server latched so far.
func (s *latchServer) latchCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.latches)
}

// sweepTarget starts a latchServer with limit on loopback and writes the
// target file that drives it: one arm, latch, whose before hook resets it.
func sweepTarget(t *testing.T, limit int64) (*latchServer, string) {
	t.Helper()
	dir := t.TempDir()
	s := &latchServer{limit: limit, hold: 20 * time.Millisecond, reset: filepath.Join(dir, "reset")}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	file := filepath.Join(dir, "latch.yaml")
	body := fmt.Sprintf(`endpoints: [%q]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 100}, hot: 5}
arms: [{name: latch, before: ["touch %s"]}]
`, srv.URL, s.reset)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, file
}

// sweepArgs are a sweep's flags on the latch server, its windows short
// but long enough for the verdict: recovered needs RecoveryHold (1s) of
// rows in band after the burst ends, which after 2s leaves room for; a
// latched server answers nothing ok, so no row after the burst is in band
// and the run is not recovered. 20 req/s held 20 ms keeps under one
// request of the steady load in flight.
func sweepArgs(target, results string, extra ...string) []string {
	return sweepArgsAfter("2s", target, results, extra...)
}

// sweepArgsAfter are sweepArgs with the window after T given.
func sweepArgsAfter(after, target, results string, extra ...string) []string {
	return append([]string{"sweep", "--target", target, "--trigger", "burst", "--rate", "20", "--clients", "10",
		"--warmup", "200ms", "--before", "1s", "--after", after, "--results-dir", results, "--state-dir", results}, extra...)
}

// The sweep brackets a real server's known tipping point within its
// resolution, keeps every probe and run, and its gates exit 99 when one
// fails: herdbench sweep end to end, the built binary against a server on
// loopback.
func TestSweepBracketsAKnownTippingPoint(t *testing.T) {
	t.Parallel()
	const limit = 30
	s, target := sweepTarget(t, limit)
	localtest.Measures(t) // its verdicts read latencies: not beside an exclusive test
	results := t.TempDir()
	code, stdout, stderr := clitest.Run(t, nil, sweepArgs(target, results, "--vary", "burst=8..120", "--repeat", "1",
		"--gate", "latch:tipping >= 20", "--gate", "latch:tipping == none")...)
	if code != clitest.ExitGatesFailed {
		t.Fatalf("sweep = exit %d; want %d (one gate fails)\nstdout:\n%s\nstderr:\n%s", code, clitest.ExitGatesFailed, stdout, stderr)
	}
	res := clitest.ReadSweep(t, results)
	if res.Schema != sweep.Schema || res.Partial || len(res.Arms) != 1 {
		t.Fatalf("results: schema %q, partial %v, %d arms; want %s, whole, one arm", res.Schema, res.Partial, len(res.Arms), sweep.Schema)
	}
	a := res.Arms[0]
	if a.Tipping.State != sweep.TipFound {
		t.Fatalf("tipping %+v, bracket %s; want found", *a.Tipping, sweep.BracketText(a.Bracket))
	}
	lo, hi := *a.Bracket.Survived, *a.Bracket.Tipped
	// a burst of lo survived: lo requests, and the steady load's, stayed
	// within the limit; a burst of hi tipped: hi and the steady load's
	// went over it. The steady load keeps under one request in flight on
	// a quiet machine; on a busy one the generator sends the requests it
	// is late with together (load.lag_*), and once, at -p 4 in the
	// suite, 5 of them were in flight as a burst of 26 latched the
	// server: steady is that, and one more.
	const steady = 6
	if lo > limit || hi <= limit-steady {
		t.Errorf("bracket [%v, %v]; want it to hold the limit, %d (within the steady load's %d in flight)", lo, hi, limit, steady)
	}
	if !(hi-lo <= 1 || hi/lo <= 1+res.Settings.Resolution) {
		t.Errorf("bracket [%v, %v]; want its ends within %v of each other, or adjacent", lo, hi, res.Settings.Resolution)
	}
	runs := 0
	for _, p := range a.Probed {
		for _, r := range p.Runs {
			runs++
			if r.Verdict != r.Result.Verdict || r.Result.Name != "latch" || r.Result.Burst == nil || r.Result.Burst.Clients != int(p.At[0].Value) {
				t.Errorf("probe %s: run %+v; want the arm's result with its burst of %v", sweep.AtText(p.At), r.Result.Burst, p.At[0].Value)
			}
		}
		if tipped := p.Runs[0].Verdict != "recovered"; tipped != p.Tipped {
			t.Errorf("probe %s: tipped %v with its one run %s", sweep.AtText(p.At), p.Tipped, p.Runs[0].Verdict)
		}
	}
	if len(a.Probed) != a.Probes || runs != a.Runs || a.Probes < 3 {
		t.Errorf("%d probes kept of %d, %d runs of %d; want every probe and run in the results", len(a.Probed), a.Probes, runs, a.Runs)
	}
	t.Logf("bracket [%v, %v]; latched at %v in flight", lo, hi, s.latches)
	if got := s.resets.Load(); got != int64(runs) {
		t.Errorf("the server was reset %d times; want once before each of the %d runs", got, runs)
	}
	for _, w := range []string{"latch:tipping >= 20 latch " + a.Tipping.Text + " pass", "latch:tipping == none latch " + a.Tipping.Text + " FAIL", "1 of 2 gates failed"} {
		if !strings.Contains(squeeze(stdout), w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}

	// a range the server survives whole: no tipping point, which a gate
	// asks for, so it passes. Recovered needs a second of rows in band
	// after the burst; on a busy machine, rows of two requests each, a
	// late one throws a row out of band, and a burst of 4 read as tipped
	// once with 2 s after T: 4 s leave room for the second
	results = t.TempDir()
	latched := s.latchCount()
	code, stdout, stderr = clitest.Run(t, nil, sweepArgsAfter("4s", target, results, "--vary", "burst=4..8", "--repeat", "1", "--gate", "tipping == none")...)
	if code != clitest.ExitOK || !strings.Contains(stdout, "none") {
		t.Fatalf("sweep 4..8 = exit %d (the server latched %d times meanwhile); want 0 with no tipping point\nstdout:\n%s\nstderr:\n%s",
			code, s.latchCount()-latched, stdout, stderr)
	}
	if res := clitest.ReadSweep(t, results); res.Arms[0].Tipping.State != sweep.TipNone || res.Arms[0].Probes != 2 {
		t.Errorf("tipping %+v after %d probes; want none after both ends", *res.Arms[0].Tipping, res.Arms[0].Probes)
	}
}

// squeeze is s with every run of spaces one space: table cells apart from
// their alignment.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// Bad input exits 2 before anything is sent, naming the flag and the
// accepted values.
func TestSweepBadInput(t *testing.T) {
	base := []string{"sweep", "--target", "http://127.0.0.1:9/items/{key}", "--trigger", "burst", "--arms", "baseline", "--dry-run"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--vary", "slowdb_for=1s..2s"}, `--vary: slowdb_for=1s..2s: "slowdb_for" is not a magnitude of trigger burst (accepted: burst, hot_keys, rate)`},
		{[]string{"--vary", "burst=100..10"}, "--vary: burst=100..10: FROM 100 is not below TO 10 (accepted: FROM < TO, such as burst=10..100)"},
		{[]string{"--vary", "burst=10..10"}, "--vary: burst=10..10: FROM 10 is not below TO 10"},
		{[]string{"--vary", "burst=10..1000", "--resolution", "1"}, "--resolution: 1 out of range (accepted: above 0 and below 1"},
		{[]string{"--vary", "burst=10..1000", "--resolution", "0"}, "--resolution: 0 out of range (accepted: above 0 and below 1"},
		{[]string{"--vary", "burst=10..1000", "--repeat", "0"}, "--repeat: 0 out of range (accepted: 1 to 20 runs per probe"},
		{[]string{"--grid", "burst=", "--grid", "rate=10,20"}, "--grid: burst=: no values (accepted: one or more, NAME=V1,V2,...)"},
		{[]string{"--grid", "burst=10", "--vary", "burst=10..100"}, "--vary: given with --grid (accepted: one of them"},
		{nil, "--vary: required, or --grid (accepted: --vary NAME=FROM..TO or --grid NAME=V1,V2,...; NAME one of burst, hot_keys, rate)"},
		{[]string{"--vary", "burst=10..100", "--gate", "lock:tipping >= 20"}, `--gate: "lock:tipping >= 20": arm "lock" is not swept (accepted: baseline)`},
		{[]string{"--vary", "burst=10..100", "--gate", "tipping >= 2s"}, `--gate: "tipping >= 2s": "2s" is not a whole number of 1 or more, such as 100, 1k or 1.5k (accepted: none, or a magnitude of burst in its unit)`},
		{[]string{"--vary", "burst=10..20000"}, "--vary: burst=20000: burst: 20000 out of range (accepted: 1 to 10000 clients)"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, nil, append(base, tt.args...)...)
			if code != clitest.ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("sweep %s = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2, stderr with %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
			}
		})
	}
}

// A dry run prints what the sweep may run at most, and sends nothing.
func TestSweepDryRun(t *testing.T) {
	s, target := sweepTarget(t, 30)
	code, stdout, stderr := clitest.Run(t, nil, sweepArgs(target, t.TempDir(), "--vary", "burst=10..1000", "--dry-run")...)
	want := []string{"dry run: nothing was sent", "sweep     burst=10..1000, bisection on a log scale to 10%",
		"probes    at most 9 per arm, beginning with 10; 1000", "runs      at most 27 in all", "time      at most 1m26.4s of load (27 runs of 3.2s each"}
	for _, w := range want {
		if code != clitest.ExitOK || !strings.Contains(stdout, w) {
			t.Errorf("dry run = exit %d, stdout lacks %q:\n%s%s", code, w, stdout, stderr)
		}
	}
	if s.resets.Load() != 0 || s.inFlight.Load() != 0 {
		t.Errorf("the dry run touched the server")
	}
}

// Ctrl-C ends the sweep where it is: the results found so far are
// written, marked partial and interrupted, and the exit is the stampede's.
func TestSweepCtrlCWritesPartialResults(t *testing.T) {
	t.Parallel()
	s, target := sweepTarget(t, 30)
	localtest.Measures(t)
	results := t.TempDir()
	cmd := exec.Command(localtest.Binary(), sweepArgs(target, results, "--vary", "burst=8..120", "--repeat", "1")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// interrupt once the second run has begun (its before hook reset the
	// server): the first probe is done
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for s.resets.Load() < 2 {
		select {
		case <-tick.C:
		case err := <-exited:
			t.Fatalf("sweep ended (%v) before its second run\n%s%s", err, stdout.String(), stderr.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("no second run within 60s\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != clitest.ExitError || !strings.Contains(stderr.String(), "interrupted: partial results") {
			t.Errorf("sweep after Ctrl-C: %v; want exit %d, interrupted\n%s%s", err, clitest.ExitError, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("sweep still running 60s after Ctrl-C\n%s", stderr.String())
	}
	res := clitest.ReadSweep(t, results)
	if !res.Partial || res.Stopped != sweep.StoppedInterrupted || len(res.Arms) != 1 {
		t.Fatalf("results after Ctrl-C: partial %v, stopped %q, %d arms; want partial, interrupted, the arm begun", res.Partial, res.Stopped, len(res.Arms))
	}
	a := res.Arms[0]
	if a.Tipping.State != sweep.TipUnknown || len(a.Probed) < 1 || a.Probed[0].At[0].Value != 8 || a.Bracket.Survived == nil {
		t.Errorf("arm after Ctrl-C: tipping %+v, %d probes, bracket %s; want unknown, with the probe of 8 that survived", *a.Tipping, len(a.Probed), sweep.BracketText(a.Bracket))
	}
}
