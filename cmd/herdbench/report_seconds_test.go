package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

// secondsResults is a real run on the local testbed with gates over
// seconds (experiment/result's TestSecondsAreTheTimelinesRows ties its
// seconds to its rows): arms baseline and hedge=50ms, classes items and
// likes, five whole seconds after each arm's settle.
const secondsResults = "../../reporters/testdata/seconds.json"

// report --gate checks gates over seconds on saved results as a run
// does: the share of the seconds that held against the share wanted
// (exit 0 or 99), each report showing the seconds; a stored result whose
// seconds the arm's rows do not give is refused (exit 2).
func TestReportChecksGatesOverSeconds(t *testing.T) {
	out := t.TempDir()
	junit, js := filepath.Join(out, "gates.xml"), filepath.Join(out, "again.json")
	tampered := filepath.Join(out, "tampered.json")
	b, err := os.ReadFile(secondsResults)
	if err != nil {
		t.Fatal(err)
	}
	// the first stored second of the first gate, 290.82 ms on the rows, made to hold
	if err := os.WriteFile(tampered, []byte(strings.Replace(string(b), `"value": 290.82,
            "held": false`, `"value": 90.82,
            "held": true`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		args           []string
		want           int
		stdout, stderr string
	}{
		{"the run's own gates", []string{"report", secondsResults}, exitGatesFailed,
			"http.p99_ms < 250 for 80% of seconds                      baseline     3 of 5 s (60%)    FAIL", "5 of 8 gates failed"},
		// hedge=50ms held p99 < 250 in 2 of its 5 seconds: 40% passes, 41% does not
		{"at the share", []string{"report", secondsResults, "--gate", "hedge=50ms:http.p99_ms < 250 for 40% of seconds"}, exitOK,
			"hedge=50ms:http.p99_ms < 250 for 40% of seconds   hedge=50ms   2 of 5 s (40%)   pass", ""},
		{"above the share", []string{"report", secondsResults, "--gate", "hedge=50ms:http.p99_ms < 250 for 41% of seconds",
			"-o", "junit=" + junit, "-o", "json=" + js}, exitGatesFailed,
			"2 of 5 s (40%)   FAIL", "1 of 1 gates failed"},
		{"a class's seconds", []string{"report", secondsResults, "--gate", "requests.likes.goodput_rps >= 30 for 100% of seconds"}, exitOK,
			"requests.likes.goodput_rps >= 30 for 100% of seconds   hedge=50ms   5 of 5 s (100%)   pass", ""},
		// a repeated arm: each of its three runs has one whole second after its settle
		{"every run's seconds", []string{"report", "../../reporters/testdata/repeated.json", "--gate", "lock:http.p99_ms < 300 for 100% of seconds"}, exitOK,
			"lock:http.p99_ms < 300 for 100% of seconds   lock   3 of 3 s (100%) (over 3 runs' seconds)   pass", ""},
		{"a path the rows do not carry", []string{"report", secondsResults, "--gate", "requests.likes.p50_ms < 30 for 90% of seconds"}, exitUsage,
			"", "requests.likes.p50_ms cannot be judged over seconds: the timeline's rows do not carry it second by second (accepted over seconds: cache.hit_ratio, db.peak_qps, http.drop_rate, http.errors.unsent, http.p99_ms, http.requests, requests.items.errors.unsent,"},
		{"stored seconds the rows do not give", []string{"report", tampered}, exitUsage,
			"", `gates[0].seconds: "http.p99_ms < 250 for 80% of seconds" on baseline: windows[0] is 90.82 at T+2.1s, held true, and the rows give 290.82 at T+2.1s, held false`},
	} {
		code, stdout, stderr := herdbench(t, c.args...)
		if code != c.want || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%s: herdbench %s = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, stdout with %q, stderr with %q",
				c.name, strings.Join(c.args, " "), code, stdout, stderr, c.want, c.stdout, c.stderr)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(x), "measured 2 of 5 s (40%), expected &lt; 250 in at least 41% of seconds") ||
		!strings.Contains(string(x), "not held in the seconds from T+2.1s (1011.71), T+3.1s (790.53), T+5.1s (261.12)") {
		t.Errorf("JUnit of the failed gate over seconds:\n%s\n%v; want its measure and the seconds that did not hold", x, err)
	}
	b, err = os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Gates) != 1 || rep.Gates[0].Seconds == nil || rep.Gates[0].Seconds.Count != 5 || len(rep.Gates[0].Seconds.Windows) != 5 ||
		rep.Gates[0].Seconds.Share != 0.41 || rep.Plan.Gates[0].Share != 0.41 {
		t.Errorf("-o json: gates %+v, plan's %+v; want the one gate over seconds with its 5 seconds and share 41%%", rep.Gates, rep.Plan.Gates)
	}
}
