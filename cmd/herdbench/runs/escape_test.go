package runs

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// --escape from the command line to every report: the retry storm of
// experiment/ontestbed's TestEscapeOnTheTestbed (one replica, two pooled
// connections, 20 req/s, clients retrying four times after 300 ms) run
// by stampede, its escape load in the results, the table's column and
// steps, a JUnit property, and a gate on its share as a percentage.
func TestStampedeEscapeFromTheCommandLine(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := clitest.StateDir(t), t.TempDir()
	results, junit := filepath.Join(out, "r.json"), filepath.Join(out, "r.xml")
	code, stdout, stderr := clitest.Run(t, nil, "stampede", "--state-dir", dir, "--results-dir", out,
		"--replicas", "1", "--db-pool", "2", "--db-timeout", "1s", "--items", "1000",
		"--rate", "20", "--keys", "100", "--hot-keys", "100", "--ttl", "10ms", "--query-cost", "50ms",
		"--timeout", "300ms", "--retry", "immediate:4", "--clients", "10",
		"--trigger", "slowdb", "--slowdb-latency", "500ms", "--slowdb-for", "3s", "--arms", "none",
		"--warmup", "1s", "--before", "3s", "--after", "auto:60s", "--escape", "75%,50%,25%,10%:4s", "--seed", "7",
		"--gate", "none:escape.share <= 50%", "-o", "table", "-o", "json="+results, "-o", "junit="+junit)
	t.Logf("%s%s", stdout, stderr)
	if code != clitest.ExitOK {
		t.Fatalf("stampede --escape = exit %d; want 0, the gate on escape.share passed", code)
	}
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	e := rep.Arms[0].Escape
	if e == nil || e.RPS == nil || e.Share == nil || len(e.Steps) < 2 || rep.Plan.Escape == nil {
		t.Fatalf("results escape %+v, plan escape %v; want an escape load after two steps or more", e, rep.Plan.Escape)
	}
	for _, want := range []string{"escape", "stuck", "recovered"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q: the escape column and its steps", want)
		}
	}
	// the model's expectation beside the verdict (predict.Expect): the
	// stuck capacity this metastable arm measured, the pool its replica
	// said on /healthz, and the table's model line exactly when the two
	// disagree
	a := rep.Arms[0]
	in := map[string]float64{}
	if a.Model != nil {
		for _, i := range a.Model.Inputs {
			in[i.Name] = i.Value
		}
	}
	if m := a.Model; m == nil || m.Expect == nil || in["workers"] != 2 || in["stuck"] != math.Round(a.Loop.DBQPS.After*10)/10 {
		t.Errorf("model %+v beside %s (stuck %v q/s); want an expectation from the replica's 2 connections and the arm's loop.db_qps.after, to 0.1",
			m, a.Verdict, a.Loop.DBQPS)
	} else if line := strings.Contains(stdout, "model     none: verdict "+a.Verdict); line != m.Disagrees(a) {
		t.Errorf("model expects %s, measured %s: the table's model line %v; want it exactly when they disagree", *m.Expect, a.Verdict, line)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `name="escape.rps:none"`) {
		t.Errorf("junit lacks the escape.rps:none property:\n%s", x)
	}
}
