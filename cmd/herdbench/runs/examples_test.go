package runs

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/subject"
)

// Every example runs, its gates checked, on one testbed; flags given on the
// command line override the file (a short timeline here).
func TestExamplesRun(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	examples, err := filepath.Glob("../../../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("examples: %v, %v", examples, err)
	}
	dir := clitest.StateDir(t)
	if code, stdout, stderr := clitest.Run(t, nil, "testbed", "up", "--state-dir", dir, "--replicas", "2", "--items", "10000"); code != clitest.ExitOK {
		t.Fatalf("testbed up = exit %d\n%s%s", code, stdout, stderr)
	}
	localtest.Measures(t)
	for _, ex := range examples {
		switch filepath.Base(ex) {
		case "staging.yaml", "compose-service.yaml", "nginx-service.yaml", "varnish-service.yaml", "mysql-memcached-service.yaml":
			continue // target files, not scenarios: TestStagingExample, testbed/compose/e2e, TestHTTPCacheExamples, TestMySQLMemcachedExample
		case "ci-nginx-gate.yaml":
			continue // attacks nginx in front of the testbed: TestGateOnNginxInFrontOfAService
		case "ci-service-gate.yaml":
			continue // attacks a service under docker compose: testbed/compose/e2e runs it
		case "cascade.yaml":
			continue // needs two tiers: TestCascadeExampleRuns
		}
		t.Run(filepath.Base(ex), func(t *testing.T) {
			f, err := scenario.Read(ex, scenario.Vocabulary{Knobs: subject.Knobs(nil)})
			if err != nil {
				t.Fatalf("example does not parse: %v", err)
			}
			out := t.TempDir()
			jsonFile := filepath.Join(out, "r.json")
			args := []string{"run", ex, "--state-dir", dir, "--results-dir", out, "-o", "json=" + jsonFile,
				"--warmup", "0s", "--before", "1s", "--after", "1s", "--seed", "5"}
			if n := f.Trigger.Name; n != nil && *n == "outage" { // another trigger's option is refused: it would do nothing
				args = append(args, "--outage", "500ms")
			}
			code, stdout, stderr := clitest.Run(t, nil, args...)
			// a shortened run may miss a gate tuned for the full one (99),
			// but it runs every arm to the end and checks every gate
			if code != clitest.ExitOK && code != clitest.ExitGatesFailed {
				t.Fatalf("run %s = exit %d\n%s%s", ex, code, stdout, stderr)
			}
			rep := clitest.ReadResults(t, jsonFile)
			if len(rep.Arms) != len(f.Arms) || rep.Partial {
				t.Errorf("results: %d arms, partial %v; want the file's %d, complete", len(rep.Arms), rep.Partial, len(f.Arms))
			}
			gateArms := 0
			for _, g := range rep.Plan.Gates {
				if g.Arm != "" {
					gateArms++
				} else {
					gateArms += len(rep.Arms)
				}
			}
			fileGates := len(f.Gates)
			if rep.Plan.Trigger == "writes" {
				fileGates++ // its default gate: no acknowledged write lost
			}
			if len(rep.Gates) != gateArms || len(rep.Plan.Gates) != fileGates {
				t.Errorf("results: %d gate results of %d gates; want every gate of the file checked on its arms (%d)", len(rep.Gates), len(rep.Plan.Gates), gateArms)
			}
			// the flags won over the file; the file's other values held
			if time.Duration(rep.Plan.After) != time.Second || rep.Seed != 5 {
				t.Errorf("plan after %s, seed %d; want the command line's 1s and 5", rep.Plan.After, rep.Seed)
			}
			if f.Load.Rate != nil && rep.Plan.Rate != *f.Load.Rate {
				t.Errorf("plan rate %d; want the file's %d", rep.Plan.Rate, *f.Load.Rate)
			}
		})
	}
	if _, err := local.ReadStatus(dir); err != nil {
		t.Errorf("the testbed the examples ran on is gone: %v", err)
	}
}

// examples/cascade.yaml runs on a two-tier testbed as its header says:
// every arm runs with its own edge policy, and has its layers.
func TestCascadeExampleRuns(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	dir := clitest.StateDir(t)
	if code, stdout, stderr := clitest.Run(t, nil, "testbed", "up", "--state-dir", dir, "--replicas", "2", "--tiers", "2", "--edge-timeout", "500ms"); code != clitest.ExitOK {
		t.Fatalf("testbed up --tiers 2 = exit %d\n%s%s", code, stdout, stderr)
	}
	// on two tiers an edge arm and a gate on the layers are the plan's
	code, stdout, stderr := clitest.Run(t, nil, "stampede", "--dry-run", "--state-dir", dir, "--arms", "none,edge-retry=immediate:2", "--gate", "layers.end_to_end < 100")
	if code != clitest.ExitOK || !strings.Contains(stdout, "target    the testbed running in "+dir) || !strings.Contains(stdout, "edge-retry=immediate:2") {
		t.Errorf("stampede --dry-run with an edge arm on two tiers = exit %d\n%s%s; want the plan on the running testbed", code, stdout, stderr)
	}
	localtest.Measures(t)
	jsonFile := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr = clitest.Run(t, nil, "run", "../../../examples/cascade.yaml", "--state-dir", dir, "--results-dir", t.TempDir(), "-o", "json="+jsonFile,
		"--warmup", "0s", "--before", "1s", "--after", "1s", "--outage", "500ms", "--seed", "5")
	if code != clitest.ExitOK {
		t.Fatalf("run cascade.yaml = exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "DB per request") {
		t.Errorf("the table has no layers table:\n%s", stdout)
	}
	rep := clitest.ReadResults(t, jsonFile)
	want := map[string]string{"everywhere": "timeout 500ms, retry immediate:2", "one-layer": "timeout 500ms, retry none",
		"a-budget": "timeout 500ms, retry immediate:2, budget 10%", "a-breaker": "timeout 500ms, retry immediate:2, breaker 5:1s",
		"a-bulkhead": "timeout 500ms, retry immediate:2, bulkhead 8", "deadline": "timeout 500ms, retry immediate:2, deadline 400ms"}
	if len(rep.Arms) != len(want) {
		t.Fatalf("%d arms; want %d", len(rep.Arms), len(want))
	}
	for _, a := range rep.Arms {
		if a.Layers == nil || a.Edge == nil || a.Edge.Config.String() != want[a.Name] || a.Layers.Edge != a.Layers.ClientAttempts {
			t.Errorf("%s: layers %+v, edge %+v; want layers, the edges' policy %q, and at A what the clients sent", a.Name, a.Layers, a.Edge, want[a.Name])
		}
	}
	// the run puts the edges' start-up policy back
	code, stdout, _ = clitest.Run(t, nil, "testbed", "status", "--state-dir", dir, "--json")
	var st struct{ Edge []string }
	if err := json.Unmarshal([]byte(stdout), &st); code != clitest.ExitOK || err != nil || len(st.Edge) != 2 {
		t.Fatalf("status: exit %d, %v, edges %v", code, err, st.Edge)
	}
	cfg, err := edge.NewFleet(st.Edge).Config(context.Background())
	if err != nil || cfg.String() != "timeout 500ms, retry none" {
		t.Errorf("after the run the edges run with %q (%v); want their start-up policy, timeout 500ms, retry none", cfg.String(), err)
	}
}
