package workers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/workers"
)

// The tests that take a seat run in parallel (t.Parallel), as
// experiment/ontestbed's do: each waits mostly on its workers, servers
// and load windows, go test runs -parallel of them at once (GOMAXPROCS:
// two on the project's machine), and what each measures takes one of
// machinelock.Seats, shared with every other package's load tests, so the
// machine is no busier than before and the package no longer runs its
// longest tests one after another. Before them, one at a time: the tests
// that take no seat, whose claims are exact counts of requests answered
// (items' ok equal to its requests once failed beside them, 672 of 675 on
// a busy machine), and TestThreeWorkersMakeOneHerd, whose start skew is a
// tight bound.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// workerProc is one `herdbench worker` process on loopback.
type workerProc struct {
	url   string
	cmd   *exec.Cmd
	lines chan string // its log, line by line
}

// startWorkers starts n worker processes and waits, polling their clocks,
// until each answers.
func startWorkers(t *testing.T, n int) []*workerProc {
	t.Helper()
	return startWorkersEnv(t, n, nil)
}

// startWorkersEnv is startWorkers with env as the workers' environment
// (nil: this process's).
func startWorkersEnv(t *testing.T, n int, env []string) []*workerProc {
	t.Helper()
	return startWorkersIn(t, n, env, "")
}

// startWorkersIn is startWorkersEnv with dir as the workers' working
// directory ("": this process's).
func startWorkersIn(t *testing.T, n int, env []string, dir string) []*workerProc {
	t.Helper()
	ws := make([]*workerProc, n)
	listening := make([]chan string, n)
	for i := range ws {
		// the worker binds a port of its own and says which: a port found
		// free here and passed on could be taken again before it binds
		cmd := exec.Command(localtest.Binary(), "worker", "--listen", "127.0.0.1:0")
		cmd.Env, cmd.Dir = env, dir
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w := &workerProc{cmd: cmd, lines: make(chan string, 100)}
		listening[i] = make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(pr)
			said := false
			for sc.Scan() {
				if _, addr, ok := strings.Cut(sc.Text(), " listening on "); ok && !said {
					listening[i] <- addr
					said = true
					continue
				}
				select {
				case w.lines <- sc.Text():
				default:
				}
			}
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			pw.Close()
		})
		ws[i] = w
	}
	deadline := time.After(20 * time.Second)
	for i, w := range ws {
		select {
		case addr := <-listening[i]:
			w.url = "http://" + addr
		case <-deadline:
			t.Fatalf("worker %d did not say where it listens within 20 s", i)
		}
		resp, err := http.Get(w.url + "/v1/clock")
		if err != nil {
			t.Fatalf("worker %s does not answer: %v", w.url, err)
		}
		resp.Body.Close()
	}
	return ws
}

func urls(ws []*workerProc) string {
	var u []string
	for _, w := range ws {
		u = append(u, w.url)
	}
	return strings.Join(u, ",")
}

// stampede runs herdbench stampede from the workers ws with args, fails t
// unless it exits 0, and returns its results and its table.
func stampede(t *testing.T, ws []*workerProc, args ...string) (experiment.Report, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	args = append([]string{"stampede", "--workers", urls(ws), "--state-dir", localtest.StateDir(t), "--results-dir", dir, "--json", out}, args...)
	code, stdout, stderr := localtest.Run(t, nil, args...)
	if code != 0 {
		t.Fatalf("herdbench %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	var rep experiment.Report
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, stdout
}

// Three workers on one machine make one herd: one report whose requests
// are the plan's, every one intended counted once; the start skew is
// reported and small on loopback; the trigger fired once, by the
// controller.
//
// It runs before the parallel tests, not beside them: its start skew is a
// bound of 50 ms, and beside this package's other worker processes on a
// busy machine one run measured 676 ms (2026-12-03).
func TestThreeWorkersMakeOneHerd(t *testing.T) {
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	const rate = 600
	rep, stdout := stampede(t, ws, "--arms", "none,lock", "--rate", fmt.Sprint(rate), "--warmup", "500ms", "--before", "1s", "--after", "2s")
	if !strings.Contains(stdout, "workers   3, each sending every 3rd request; start skew max") {
		t.Errorf("the table does not say how the workers kept the herd:\n%s", stdout)
	}
	for _, a := range rep.Arms {
		// the measured window is before + after: 3 s at 600/s
		if a.Load.Intended != rate*3 {
			t.Errorf("%s: %d requests intended over before and after; want %d, the plan's", a.Name, a.Load.Intended, rate*3)
		}
		if a.HTTP.Requests != rate*2 {
			t.Errorf("%s: http.requests %d; want %d, the plan's from T", a.Name, a.HTTP.Requests, rate*2)
		}
		ws := a.Workers
		if ws == nil || ws.Count != 3 || len(ws.Each) != 3 {
			t.Fatalf("%s: workers %+v; want 3", a.Name, ws)
		}
		var sum int64
		for _, w := range ws.Each {
			sum += w.Load.Intended
			if w.ClockErrorMS < 0 || w.ClockErrorMS > 5 {
				t.Errorf("%s: worker %d clock error %gms; want a bound from a loopback round trip", a.Name, w.Index, w.ClockErrorMS)
			}
			// one machine, one clock: the true offset is 0, so the measured
			// one lies within its bound (both rounded to 0.01 ms)
			if math.Abs(w.ClockOffsetMS) > w.ClockErrorMS+0.02 {
				t.Errorf("%s: worker %d clock offset %gms, bound %gms; want within the bound on one machine", a.Name, w.Index, w.ClockOffsetMS, w.ClockErrorMS)
			}
		}
		if sum != a.Load.Intended {
			t.Errorf("%s: the workers intended %d; the arm %d", a.Name, sum, a.Load.Intended)
		}
		t.Logf("%s: start skew max %gms p99 %gms", a.Name, ws.StartSkewMaxMS, ws.StartSkewP99MS)
		if ws.StartSkewP99MS < 0 || ws.StartSkewP99MS > ws.StartSkewMaxMS {
			t.Errorf("%s: start skew p99 %gms, max %gms; want 0 <= p99 <= max", a.Name, ws.StartSkewP99MS, ws.StartSkewMaxMS)
		}
		// a quiet machine measures 1.4 to 2.8 ms; a CI machine compiling
		// beside this test once 10.3 ms. The check is that the herd held
		// together, far inside the 300 ms start margin, not a speed claim.
		if ws.StartSkewMaxMS < 0 || ws.StartSkewMaxMS >= 50 {
			t.Errorf("%s: start skew max %gms; want under 50ms on loopback", a.Name, ws.StartSkewMaxMS)
		}
		if a.Trigger.FiredAt == nil {
			t.Errorf("%s: the trigger never fired", a.Name)
		}
		// the expire trigger unlinked the hot keys once: Redis counted
		// the misses of one herd, not three
		if a.DB == nil || a.DB.Queries == 0 {
			t.Errorf("%s: no database queries after T; want the herd's", a.Name)
		}
	}
	none, lock := rep.Arms[0], rep.Arms[1]
	if lock.DB != nil && none.DB != nil && lock.DB.Queries > none.DB.Queries {
		t.Errorf("lock sent %d queries after T, none %d; want the lock's fewer, as from one machine", lock.DB.Queries, none.DB.Queries)
	}
}

// A burst is split over the workers, each releasing its share at T from
// connections it opened before: the arm's burst is every client, each
// answered, with the spread over all of them.
func TestWorkersSplitTheBurst(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	rep, _ := stampede(t, ws, "--arms", "none", "--rate", "300", "--trigger", "burst", "--burst", "600",
		"--warmup", "500ms", "--before", "1s", "--after", "2s")
	a := rep.Arms[0]
	if a.Burst == nil || a.Burst.Clients != 600 || a.Burst.OK != 600 {
		t.Fatalf("burst of 600 over 3 workers: %+v; want 600 clients released, 600 answered", a.Burst)
	}
	if a.Burst.SpreadP50US <= 0 || a.Burst.SpreadP99US < a.Burst.SpreadP50US {
		t.Errorf("burst spread p50 %dus, p99 %dus; want 0 < p50 <= p99", a.Burst.SpreadP50US, a.Burst.SpreadP99US)
	}
	for _, w := range a.Workers.Each {
		if w.Burst != 200 {
			t.Errorf("worker %d released %d of the burst; want 200, a third", w.Index, w.Burst)
		}
	}
	t.Logf("burst of 600 from 3 workers: spread p50 %dus p99 %dus", a.Burst.SpreadP50US, a.Burst.SpreadP99US)
}

// A worker killed mid-arm invalidates the arm: the run ends, names the
// worker, and writes what it measured as partial results; nothing hangs.
func TestKilledWorkerGivesAPartialReport(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, localtest.Binary(), "stampede", "--workers", urls(ws), "--arms", "none", "--rate", "300",
		"--warmup", "1s", "--before", "2s", "--after", "20s", "--state-dir", localtest.StateDir(t), "--results-dir", dir)
	var outb strings.Builder
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	victim := ws[2]
	started := false
	for !started {
		select {
		case l := <-victim.lines:
			started = strings.Contains(l, "msg=sending")
		case <-ctx.Done():
			t.Fatalf("worker 2 never started its share:\n%s", outb.String())
		}
	}
	_ = victim.cmd.Process.Kill()
	err := cmd.Wait()
	out := outb.String()
	if ctx.Err() != nil {
		t.Fatalf("the run did not end after a worker died:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("stampede with a killed worker: %v; want exit 1\n%s", err, out)
	}
	want := fmt.Sprintf("worker 2 (%s): lost mid-arm", victim.url)
	if !strings.Contains(out, want) || !strings.Contains(out, "partial results") {
		t.Errorf("output does not name the lost worker (%q) and the partial results:\n%s", want, out)
	}
}

// Resolve reads a list, refuses what is not a worker's URL, and reads a
// name's every address.
func TestResolve(t *testing.T) {
	got, err := workers.Resolve(context.Background(), "http://127.0.0.1:7070, http://127.0.0.1:7071/", 2)
	if err != nil || strings.Join(got, ",") != "http://127.0.0.1:7070,http://127.0.0.1:7071" {
		t.Errorf("Resolve(list) = %v, %v", got, err)
	}
	for _, bad := range []string{"127.0.0.1:7070", "http://a:1,http://a:1", "http://a:1/path", "dns:localhost", "dns:localhost:70700"} {
		if _, err := workers.Resolve(context.Background(), bad, 0); err == nil || !strings.Contains(err.Error(), "accepted:") {
			t.Errorf("Resolve(%q) = %v; want an error naming what is accepted", bad, err)
		}
	}
	got, err = workers.Resolve(context.Background(), "dns:localhost:7070", 0)
	if err != nil || len(got) == 0 || !strings.HasSuffix(got[0], ":7070") {
		t.Errorf("Resolve(dns:localhost:7070) = %v, %v; want localhost's addresses", got, err)
	}
}

// Check refuses, every problem at once and without resolving a name, what
// Resolve would refuse or wait on in vain, each naming its flag's field and
// what is accepted.
func TestCheck(t *testing.T) {
	tests := []struct {
		spec  string
		count int
		want  string // "" passes
	}{
		{"", 0, ""},
		{"http://127.0.0.1:7070, http://127.0.0.1:7071/", 0, ""},
		{"dns:herdbench-workers:7070", 4, ""},
		{"dns:herdbench-workers:7070", 0, ""},
		{"", 3, "worker_count: 3 without --workers dns:NAME:PORT (accepted: with dns:NAME:PORT only"},
		{"http://127.0.0.1:7070", 1, "worker_count: 1 without --workers dns:NAME:PORT"},
		{"dns:herdbench-workers:7070", -1, "worker_count: -1 out of range (accepted: 1 or more, with --workers dns:NAME:PORT)"},
		{"dns:herdbench-workers", 0, "workers: dns:herdbench-workers: want a name and a port (accepted: dns:NAME:PORT such as dns:herdbench-workers:7070)"},
		{"dns::7070", 0, "workers: dns::7070: want a name and a port"},
		{"dns:w:0", 0, `workers: dns:w:0: port "0" is not 1 to 65535 (accepted: dns:NAME:PORT, PORT 1 to 65535)`},
		{"dns:w:65536", 0, `port "65536" is not 1 to 65535`},
		{"dns:w:http", 0, `port "http" is not 1 to 65535`},
		{"http://a:1,b:2,http://a:1", 2, "worker_count: 2 without --workers dns:NAME:PORT (accepted: with dns:NAME:PORT only, how many addresses to wait for; a list of URLs is used as it is)\n" +
			"workers: \"b:2\" is not a worker's base URL (accepted: http://HOST:PORT,... or dns:NAME:PORT)\n" +
			"workers: http://a:1 is listed twice (accepted: each worker once)"},
	}
	for _, tt := range tests {
		err := workers.Check(tt.spec, tt.count)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Check(%q, %d) = %v; want %q", tt.spec, tt.count, err, tt.want)
		}
	}
}
