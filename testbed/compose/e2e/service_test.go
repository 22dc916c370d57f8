package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// docs/ci.md's first job: the team's service already runs under docker
// compose in the CI job, started by the job itself (`docker compose up -d
// --wait`), and `herdbench run examples/ci-service-gate.yaml` gates its
// database queries through a target file. The compose testbed stands in for
// the service, started here as a user starts theirs, not through `testbed
// up`. The gate passes while the service protects its cache with the fleet
// lock and fails, exit 99, once it is switched to no mitigation.
func TestGateAServiceHerdbenchDidNotStart(t *testing.T) {
	composetest.Require(t)
	localtest.Exclusive(t)
	composeUp(t, "herdbench-service")

	gate := func(strategy string) (int, string) {
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
		out := t.TempDir()
		cmd := exec.Command(localtest.Binary(), "run", "examples/ci-service-gate.yaml", "--results-dir", out,
			"-o", "table", "-o", "junit="+filepath.Join(out, "gates.xml"))
		cmd.Dir = composetest.Root()
		cmd.Env = append(os.Environ(), "SERVICE_PG_DSN=postgres://herdbench@127.0.0.1:15432/herdbench?sslmode=disable")
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		t.Logf("strategy %s: exit %d\n%s", strategy, cmd.ProcessState.ExitCode(), b.String())
		return cmd.ProcessState.ExitCode(), b.String()
	}
	if code, out := gate("lock"); code != 0 || !strings.Contains(out, "db.queries <= 55") {
		t.Errorf("the service with the fleet lock: exit %d; want 0, the gate passed\n%s", code, out)
	}
	if code, out := gate("none"); code != 99 || !strings.Contains(out, "db.queries <= 55") {
		t.Errorf("the service with no mitigation: exit %d; want 99, the gate on db.queries failed\n%s", code, out)
	}
}
