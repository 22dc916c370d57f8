package workers_test

import (
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// --escape from three workers: the retry storm of runs'
// TestStampedeEscapeFromTheCommandLine (one replica, two pooled
// connections, 20 req/s, clients retrying four times after 300 ms, a 3 s
// slowdown) sent by three worker processes on loopback. The controller
// judges the arm stuck on the merged bins, sends each step to every
// worker, and reads every step on the merged rows: the escape load is
// found, each step begun on a row's edge, and the rows of each step offer
// its rate, every worker's stripe stepped (a stripe left at the old rate
// would offer more).
func TestWorkersFindTheEscapeLoad(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	rep, stdout := stampede(t, ws, "--replicas", "1", "--db-pool", "2", "--db-timeout", "1s", "--items", "1000",
		"--rate", "20", "--keys", "100", "--hot-keys", "100", "--ttl", "10ms", "--query-cost", "50ms",
		"--timeout", "300ms", "--retry", "immediate:4", "--clients", "10",
		"--trigger", "slowdb", "--slowdb-latency", "500ms", "--slowdb-for", "3s", "--arms", "none",
		"--warmup", "1s", "--before", "3s", "--after", "auto:60s", "--escape", "75%,50%,25%,10%:4s", "--seed", "7")
	a := rep.Arms[0]
	e := a.Escape
	if e == nil || e.StartMS == nil || len(e.Steps) == 0 {
		t.Fatalf("escape %+v; want the arm judged stuck on the workers' bins and stepped down\n%s", e, stdout)
	}
	if e.RPS == nil {
		t.Errorf("escape: no load the service came back at after %d steps; want one (the 25%% and 10%% steps, 5 and 2 req/s, are under its capacity)", len(e.Steps))
	}
	rows := map[int64]result.Row{}
	for _, r := range a.Timeline {
		rows[r.TMS] = r
	}
	for _, s := range e.Steps {
		t.Logf("step %g req/s from T+%dms to T+%dms: %s", s.RPS, s.StartMS, s.EndMS, s.Read)
		if s.StartMS%result.RowWidth.Milliseconds() != 0 {
			t.Errorf("step %g req/s begins at T+%dms; want a row's edge", s.RPS, s.StartMS)
		}
		// whole seconds of the step: its rate's requests, one stepped
		// schedule over the stripes
		for from := s.StartMS; from+1000 <= s.EndMS; from += 1000 {
			var n int64
			for ms := from; ms < from+1000; ms += result.RowWidth.Milliseconds() {
				n += rows[ms].Requests
			}
			if float64(n) < s.RPS-1 || float64(n) > s.RPS+1 {
				t.Errorf("step %g req/s: %d requests intended from T+%dms over 1 s; want %g, within one", s.RPS, n, from, s.RPS)
			}
		}
	}
	var sum int64
	for _, w := range a.Workers.Each {
		sum += w.Load.Intended
	}
	if sum != a.Load.Intended {
		t.Errorf("the workers intended %d; the arm %d", sum, a.Load.Intended)
	}
}
