package sweeps

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// On the bundled testbed, a look-aside cache whose loads die with their
// requests tips when too many hot keys expire at once, and the sweep finds
// where. The tipping point is set by arithmetic more than by the machine:
// one replica with two pooled connections and 200 ms queries loads 10
// items a second, and requests give up after 500 ms, so once the expired
// keys' misses queue longer than that every load is cancelled (and costs
// its connection) and nothing refills the cache. Measured on a quiet
// machine (2026-11-25): 10 and 13 hot keys with seeds 5 and 6. A busy
// machine only lowers it, as its queries take longer than 200 ms: beside
// three packages' tests (-p 4) seed 6 tipped at 4 while seed 5, at the
// same time on a testbed of its own, tipped at 10. So the test asserts
// what holds on a busy machine: a tipping point found, at most twice the
// quiet one; how close two seeds come is the quiet machine's figure
// above, not a claim a busy one keeps.
func TestSweepFindsALookAsideCachesTippingPointOnTheTestbed(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	if tip := sweepLookAside(t, 5); tip > 2*13 {
		t.Errorf("tipping point %v hot keys; want at most 26, twice the quiet machine's 13: a busy machine only lowers it", tip)
	}
}

// sweepLookAside sweeps the look-aside cache's hot keys with seed on a
// testbed of its own, checks each probe against its sources, and returns
// the lowest count that tipped.
func sweepLookAside(t *testing.T, seed int) float64 {
	dir, results := clitest.StateDir(t), t.TempDir()
	code, stdout, stderr := clitest.Run(t, nil, "sweep", "--state-dir", dir, "--results-dir", results,
		"--trigger", "expire", "--vary", "hot_keys=2..40", "--resolution", "0.5", "--repeat", "1",
		"--rate", "100", "--keys", "100", "--replicas", "1", "--db-pool", "2", "--query-cost", "200ms",
		"--timeout", "500ms", "--abandoned-load", "canceled", "--arms", "none",
		"--warmup", "200ms", "--before", "1s", "--after", "auto:6s", "--abort-on", "verdict == metastable",
		"--seed", fmt.Sprint(seed))
	if code != clitest.ExitOK {
		t.Fatalf("sweep = exit %d\n%s%s", code, stdout, stderr)
	}
	a := clitest.ReadSweep(t, results).Arms[0]
	t.Logf("tipping %s, bracket %s, %d probes in %d ms", a.Tipping.Text, sweep.BracketText(a.Bracket), a.Probes, a.TookMS)
	if a.Tipping.State != sweep.TipFound {
		t.Fatalf("tipping %+v; want one found between 2 and 40 hot keys", *a.Tipping)
	}
	for _, p := range a.Probed {
		for _, r := range p.Runs {
			// every run tied to its own sources: Postgres completed every
			// load the replicas completed, and at most those whose
			// cancel arrived as the statement ended besides
			api, db := r.Result.API, r.Result.DB
			if db == nil || api == nil || db.QueriesTotal < api.Value("loads") || db.QueriesTotal > api.Value("loads")+api.Value("load_errors") {
				t.Errorf("probe %s: api %+v, db %+v; want Postgres' item queries from the replicas' loads to their loads and load errors",
					sweep.AtText(p.At), api, db)
			}
		}
	}
	// the look-aside model's tipping point beside it, from the runs that
	// tipped (docs/metastability.md, "The look-aside cache's herd")
	if p := a.Predicted; p == nil || p.State == sweep.PredictedRefused || !strings.Contains(stdout, "predicted") {
		t.Errorf("predicted %+v; want the look-aside model's tipping point beside the measured one:\n%s", p, stdout)
	} else {
		t.Logf("predicted %s (%d inputs)", p.Text, len(p.Inputs))
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after the sweeps: %v", pids)
	}
	return *a.Bracket.Tipped
}

// On the bundled testbed, a retry storm's sweep shows the model's
// tipping point beside the measured one, from inputs each read where
// the docs say: the pool (one replica of 4 connections, its /healthz),
// its 5 s db-timeout, the 50 ms query cost of the arm's config, the
// plan's rate and timeout, the clients' immediate:4 and the stuck
// capacity of the runs that tipped. The model puts it at 1.67 s; the
// assertion is only that it stands beside the measurement, in the
// table and the JSON: how close it falls is docs/metastability.md's
// table, from the repeat-3 sweeps.
func TestSweepShowsThePredictionBesideTheMeasuredTip(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, results := clitest.StateDir(t), t.TempDir()
	code, stdout, stderr := clitest.Run(t, nil, "sweep", "--state-dir", dir, "--results-dir", results,
		"--trigger", "slowdb", "--slowdb-latency", "500ms", "--vary", "slowdb_for=1s..4s", "--resolution", "0.5", "--repeat", "1",
		"--replicas", "1", "--db-pool", "4", "--query-cost", "50ms",
		"--rate", "40", "--keys", "100", "--hot-keys", "100", "--ttl", "10ms", "--timeout", "1s", "--retry", "immediate:4", "--arms", "none",
		"--warmup", "200ms", "--before", "1s", "--after", "auto:6s", "--abort-on", "verdict == metastable", "--seed", "7")
	if code != clitest.ExitOK {
		t.Fatalf("sweep = exit %d\n%s%s", code, stdout, stderr)
	}
	a := clitest.ReadSweep(t, results).Arms[0]
	p := a.Predicted
	if p == nil {
		t.Fatalf("arm %s: no prediction\n%s", a.Name, stdout)
	}
	t.Logf("measured %s %s, predicted %s: %s", a.Tipping.Text, sweep.BracketText(a.Bracket), p.Text, stdout)
	if a.Bracket.Tipped == nil {
		t.Fatalf("no probe tipped up to 4s (tipping %s): the stuck capacity is unmeasured, and the model refuses: %s", a.Tipping.Text, p.Note)
	}
	if p.State != sweep.PredictedFound || p.Value == nil || *p.Value < 1000 || *p.Value > 4000 {
		t.Fatalf("predicted %+v; want a tipping point found in the swept range", *p)
	}
	in := map[string]float64{}
	for _, i := range p.Inputs {
		in[i.Name] = i.Value
	}
	for name, want := range map[string]float64{"workers": 4, "deadline": 5000, "work": 50, "rate": 40, "timeout": 1000, "retries": 4, "slower": 500} {
		if in[name] != want {
			t.Errorf("input %s = %v; want %v, as the flags set it", name, in[name], want)
		}
	}
	if in["db_per_attempt"] < 0.5 {
		t.Errorf("%v queries an attempt before T; want most attempts to reach Postgres (the TTL is 10ms)", in["db_per_attempt"])
	}
	var row []string
	for line := range strings.SplitSeq(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "none" {
			row = f
		}
	}
	if !strings.Contains(stdout, "predicted") || len(row) < 3 || row[1] != a.Tipping.Text || row[2] != p.Text {
		t.Errorf("the table's row %q; want the measured %s, then the predicted %s:\n%s", row, a.Tipping.Text, p.Text, stdout)
	}
}
