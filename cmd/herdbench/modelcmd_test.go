package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// slowdbResults is a real stampede's results with --trigger slowdb on the
// testbed (predict/testdata/slowdb.json: one replica of 4 connections).
var slowdbResults = func() string {
	b, err := os.ReadFile("../../predict/testdata/slowdb.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// herdbench model on a real results file exits 0 and prints each arm's
// prediction beside what the run measured, the inputs with their
// sources, and lock's refusal with no number.
func TestModelPredictsFromARealResultsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, []byte(slowdbResults), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := herdbench(t, "model", path, "--db-pool", "4")
	if code != exitOK {
		t.Fatalf("herdbench model = exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"arm none:\n  the run's fault (3s) tips it:  yes\n  shortest tipping fault:        1.74s\n",
		"the run measured:              recovering, recovery none (recovery_ms null)",
		"workers         4 connections  --db-pool 4 × environment.replicas 1",
		"deadline        5000 ms        --db-timeout 5s",
		"stuck           74.1 q/s       loop.db_qps.after, the median of the 1 runs that did not recover",
		"arm retry-budget=10%:\n  the run's fault (3s) tips it:  no\n",
		"arm lock:\n  not modelled: strategy lock: the model is plain cache-aside (none)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("herdbench model printed\n%s\nwant it to contain %q", stdout, want)
		}
	}
	if lock := stdout[strings.Index(stdout, "arm lock:"):]; strings.Contains(lock, "shortest tipping fault") {
		t.Errorf("lock's section gives a number:\n%s", lock)
	}
}

// herdbench model on a real expire stampede (predict/testdata/lookaside/
// stampede400.json: 3 replicas of 10 connections) prints the look-aside
// model's answer for each arm beside what the run measured, and the
// reconnect singleflight borrowed from none.
func TestModelPredictsAnExpireRun(t *testing.T) {
	modelPrints(t, []string{"../../predict/testdata/lookaside/stampede400.json", "--db-pool", "10"},
		"arm none:\n  the run's 400 hot keys tip it:  yes\n  fewest hot keys that tip it:   102\n  recovery from T:               none: it tips\n  escape load:                   100 req/s\n",
		"  the run measured:              metastable, recovery none (recovery_ms null)\n",
		"arm singleflight:\n  the run's 400 hot keys tip it:  yes\n",
		"  escape load:                   750 req/s\n",
		"  the run measured:              recovered, recovery 8.592s\n",
		"pool          10 connections  --db-pool 10 × environment.replicas 3, over the 3 replicas",
		"deadline      5000 ms         --db-timeout 5s",
		"of arm none that did not recover (lent: the same pools, the least of the run's arms)",
	)
}

// On a run with --escape (predict/testdata/lookaside/escape400.json:
// 2026-12-03, 12:55 UTC, the same testbed and load, arms none,
// singleflight and lock, --after auto:90s --escape on), each arm's
// predicted escape stands beside the one it measured.
func TestModelSetsTheEscapeBesideTheMeasured(t *testing.T) {
	modelPrints(t, []string{"../../predict/testdata/lookaside/escape400.json"},
		"  escape load:                   100 req/s\n  the run measured:              metastable, recovery none (recovery_ms null), escape 500 req/s\n",
		"  escape load:                   750 req/s\n  the run measured:              metastable, recovery none (recovery_ms null), escape 750 req/s\n",
		"  the run measured:              recovered, recovery 4.888s\n",
	)
}

// modelPrints runs herdbench model with args and fails t unless it exits
// 0 and prints each of wants.
func modelPrints(t *testing.T, args []string, wants ...string) {
	t.Helper()
	code, stdout, stderr := herdbench(t, append([]string{"model"}, args...)...)
	if code != exitOK {
		t.Fatalf("herdbench model = exit %d\n%s", code, stderr)
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("herdbench model printed\n%s\nwant it to contain %q", stdout, want)
		}
	}
}
