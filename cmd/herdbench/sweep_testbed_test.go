package main

import (
	"fmt"
	"testing"

	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// On the bundled testbed, a look-aside cache whose loads die with their
// requests tips when too many hot keys expire at once, and the sweep finds
// where; swept again with another seed, it finds the same place within a
// factor of two. The tipping point is set by arithmetic more than by the
// machine: one replica with two pooled connections and 200 ms queries
// loads 10 items a second, and requests give up after 500 ms, so once the
// expired keys' misses queue longer than that every load is cancelled
// (and costs its connection) and nothing refills the cache. Measured
// 2026-11-25: [10, 13] with seeds 5 and 6.
func TestSweepFindsALookAsideCachesTippingPointOnTheTestbed(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir := stateDir(t)
	var tips []float64
	for _, seed := range []int{5, 6} {
		results := t.TempDir()
		code, stdout, stderr := herdbench(t, "sweep", "--state-dir", dir, "--results-dir", results,
			"--trigger", "expire", "--vary", "hot_keys=4..40", "--resolution", "0.5", "--repeat", "1",
			"--rate", "100", "--keys", "100", "--replicas", "1", "--db-pool", "2", "--query-cost", "200ms",
			"--timeout", "500ms", "--abandoned-load", "canceled", "--arms", "none",
			"--warmup", "200ms", "--before", "1s", "--after", "auto:6s", "--abort-on", "verdict == metastable",
			"--seed", fmt.Sprint(seed))
		if code != exitOK {
			t.Fatalf("sweep (seed %d) = exit %d\n%s%s", seed, code, stdout, stderr)
		}
		res := readSweep(t, results)
		a := res.Arms[0]
		t.Logf("seed %d: tipping %s, bracket %s, %d probes in %d ms", seed, a.Tipping.Text, sweep.BracketText(a.Bracket), a.Probes, a.TookMS)
		if a.Tipping.State != sweep.TipFound {
			t.Fatalf("seed %d: tipping %+v; want one found between 4 and 40 hot keys", seed, *a.Tipping)
		}
		for _, p := range a.Probed {
			for _, r := range p.Runs {
				// every run tied to its own sources: Postgres completed every
				// load the replicas completed, and at most those whose
				// cancel arrived as the statement ended besides
				a, d := r.Result.API, r.Result.DB
				if d == nil || a == nil || d.QueriesTotal < a.Loads || d.QueriesTotal > a.Loads+a.LoadErrors {
					t.Errorf("seed %d, probe %s: api %+v, db %+v; want Postgres' item queries from the replicas' loads to their loads and load errors",
						seed, sweep.AtText(p.At), a, d)
				}
			}
		}
		tips = append(tips, *a.Bracket.Tipped)
	}
	if lo, hi := min(tips[0], tips[1]), max(tips[0], tips[1]); hi > 2*lo {
		t.Errorf("tipping points %v with two seeds; want them within a factor of two of each other", tips)
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after the sweeps: %v", pids)
	}
}
