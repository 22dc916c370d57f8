package runs

import (
	"encoding/json"
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
// connections, 20 req/s, clients retrying four times after 200 ms) run
// by stampede, its escape load in the results, the table's column and
// steps, a JUnit property, and a gate on its share as a percentage.
func TestStampedeEscapeFromTheCommandLine(t *testing.T) {
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := clitest.StateDir(t), t.TempDir()
	results, junit := filepath.Join(out, "r.json"), filepath.Join(out, "r.xml")
	code, stdout, stderr := clitest.Run(t, nil, "stampede", "--state-dir", dir, "--results-dir", out,
		"--replicas", "1", "--db-pool", "2", "--db-timeout", "1s", "--items", "1000",
		"--rate", "20", "--keys", "100", "--hot-keys", "100", "--ttl", "10ms", "--query-cost", "50ms",
		"--timeout", "200ms", "--retry", "immediate:4", "--clients", "10",
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
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `name="escape.rps:none"`) {
		t.Errorf("junit lacks the escape.rps:none property:\n%s", x)
	}
}
