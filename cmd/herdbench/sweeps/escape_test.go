package sweeps

import (
	"strconv"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// --escape on a sweep: the same retry storm as runs' stampede
// --escape test, probed as a one-cell grid (a grid cell is a probe like
// any other: one cell holds the claim, a second only doubled its 30 s),
// the stuck probe carrying the load at which its run came back, which is
// its run's own escape.rps (the figure the stampede test ties to the
// testbed), in the sweep's results and its table.
func TestSweepEscapeFromTheCommandLine(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := clitest.StateDir(t), t.TempDir()
	code, stdout, stderr := clitest.Run(t, nil, "sweep", "--state-dir", dir, "--results-dir", out,
		"--replicas", "1", "--db-pool", "2", "--db-timeout", "1s", "--items", "1000",
		"--rate", "20", "--keys", "100", "--hot-keys", "100", "--ttl", "10ms", "--query-cost", "50ms",
		"--timeout", "300ms", "--retry", "immediate:4", "--clients", "10",
		"--trigger", "slowdb", "--slowdb-latency", "500ms", "--grid", "slowdb_for=3s", "--arms", "none",
		"--warmup", "1s", "--before", "3s", "--after", "auto:60s", "--escape", "75%,50%,25%,10%:4s", "--repeat", "1", "--seed", "7")
	t.Logf("%s%s", stdout, stderr)
	if code != clitest.ExitOK {
		t.Fatalf("sweep --escape = exit %d", code)
	}
	res := clitest.ReadSweep(t, out)
	stuck := 0
	for _, p := range res.Arms[0].Probed {
		var runs []float64
		for _, r := range p.Runs {
			if e := r.Result.Escape; e != nil && e.StartMS != nil && e.RPS != nil {
				runs = append(runs, *e.RPS)
			}
		}
		if p.Tipped {
			stuck++
		}
		switch {
		case len(p.Runs) != 1:
			t.Errorf("probe %s: %d runs; want one (--repeat 1)", sweep.AtText(p.At), len(p.Runs))
		case len(runs) == 1 && (p.EscapeRPS == nil || *p.EscapeRPS != runs[0] || p.EscapeTried != 1):
			t.Errorf("probe %s: escape_rps %v, tried %d; want its run's escape.rps %v", sweep.AtText(p.At), p.EscapeRPS, p.EscapeTried, runs[0])
		case len(runs) == 1 && !strings.Contains(stdout, "escape "+strconv.FormatFloat(runs[0], 'f', -1, 64)+"/s"):
			t.Errorf("the table lacks probe %s's escape load %v/s", sweep.AtText(p.At), runs[0])
		}
	}
	if stuck == 0 || !strings.Contains(stdout, ", escape ") {
		t.Errorf("no probe was stuck and came back: the retry storm did not tip, and the escape was never measured")
	}
}
