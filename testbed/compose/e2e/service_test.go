package e2e

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// docs/ci.md's first job: the team's service already runs under docker
// compose in the CI job, started by the job itself (`docker compose up -d
// --wait`), and `herdbench run examples/ci-service-gate.yaml` gates its
// database queries through a target file. The compose testbed stands in for
// the service, started here as a user starts theirs, not through `testbed
// up`. The gate on db.queries passes while the service protects its cache
// with the fleet lock and fails once it is switched to no mitigation, and
// the exit code follows the gates: 0 when all pass, 99 when one fails. The
// file's drop-rate gate is checked like any other but not required to
// pass: it measures the runner as much as the service, and a CI runner that
// cannot carry 300 req/s through docker's port proxies once failed it at
// 1.08% under the lock.
//
// The same service, on its compose network, is what worker containers
// attack in workersAsContainers: one project up serves both (each up and
// down is about 9 s of the engine, and the docker tests are the suite's
// tail).
func TestGateAServiceHerdbenchDidNotStart(t *testing.T) {
	composetest.Require(t)
	const project = "herdbench-service"
	docker := composeUp(t, project)
	workers := startWorkers(t, docker, project+"_default")
	localtest.Exclusive(t) // what follows measures; the up and the workers' start do not
	t.Run("the gate on db.queries follows the service's cache strategy", gateTheService)
	t.Run("workers as containers on its network", func(t *testing.T) { workers.stampede(t) })
}

func gateTheService(t *testing.T) {
	gate := func(strategy string) (code int, out string, failed map[string]bool) {
		t.Helper()
		// the service as this pull request deploys it: its cache
		// strategy, and a recompute of 200ms
		for port := 18081; port <= 18083; port++ {
			req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/admin/config", port), strings.NewReader(`{"strategy":"`+strategy+`","query_cost":"200ms"}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("PUT /admin/config on :%d: %s", port, resp.Status)
			}
		}
		dir := t.TempDir()
		junitFile := filepath.Join(dir, "gates.xml")
		// the herd is over within a second of T: a shorter timeline than
		// the file's measures the same queries
		cmd := exec.Command(localtest.Binary(), "run", "examples/ci-service-gate.yaml", "--results-dir", dir,
			"--warmup", "500ms", "--before", "1s", "--after", "2s", "-o", "table", "-o", "junit="+junitFile)
		cmd.Dir = composetest.Root()
		cmd.Env = append(os.Environ(), "SERVICE_PG_DSN=postgres://herdbench@127.0.0.1:15432/herdbench?sslmode=disable")
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		code, out = cmd.ProcessState.ExitCode(), b.String()
		t.Logf("strategy %s: exit %d\n%s", strategy, code, out)
		return code, out, gateFailures(t, junitFile)
	}
	const queries = "db.queries <= 55 [baseline]"
	for _, c := range []struct {
		strategy    string
		queriesFail bool
	}{{"lock", false}, {"none", true}} {
		code, out, failed := gate(c.strategy)
		if _, checked := failed[queries]; !checked || failed[queries] != c.queriesFail {
			t.Errorf("strategy %s: gate %q failed %v (checked %v); want failed %v\n%s", c.strategy, queries, failed[queries], checked, c.queriesFail, out)
		}
		want := 0
		if slices.Contains(slices.Collect(maps.Values(failed)), true) {
			want = 99
		}
		if code != want {
			t.Errorf("strategy %s: exit %d with gate failures %v; want %d\n%s", c.strategy, code, failed, want, out)
		}
	}
}

// gateFailures reads a JUnit report herdbench wrote: each gate testcase's
// name, and whether it failed.
func gateFailures(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var suites junit.Testsuites
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	failed := map[string]bool{}
	for _, s := range suites.Suites {
		for _, tc := range s.Testcases {
			failed[tc.Name] = tc.Failure != nil || tc.Error != nil
		}
	}
	if len(failed) == 0 {
		t.Fatalf("%s: no gate testcases:\n%s", file, b)
	}
	return failed
}
