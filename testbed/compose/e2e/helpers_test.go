package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/localtest"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// herdbench runs the built binary with the stand-in images' environment and
// fails t unless it exits 0.
func herdbench(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	code, stdout, stderr := localtest.Run(t, composetest.Env(), args...)
	if code != 0 {
		t.Fatalf("herdbench %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

// up starts the docker testbed in a new state directory, as a user does,
// and stops it when t ends; it returns the status up printed.
func up(t *testing.T, extra ...string) (testbed.Status, string) {
	t.Helper()
	dir := localtest.StateDir(t)
	t.Cleanup(func() { _, _, _ = localtest.Run(t, composetest.Env(), "testbed", "down", "--state-dir", dir) })
	began := time.Now()
	args := append([]string{"testbed", "up", "--provider", "docker", "--state-dir", dir, "--compose-file", composetest.File(), "--json"}, extra...)
	out, _ := herdbench(t, args...)
	t.Logf("testbed up --provider docker %s: %s", strings.Join(extra, " "), time.Since(began).Round(100*time.Millisecond))
	var st testbed.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("up --json: %v\n%s", err, out)
	}
	return st, dir
}

// leftovers lists what docker still holds of compose project p: its
// containers, networks and volumes, found by compose's own label.
func leftovers(t *testing.T, p string) []string {
	t.Helper()
	var left []string
	for _, kind := range [][]string{{"ps", "-a"}, {"network", "ls"}, {"volume", "ls"}} {
		args := append(kind, "-q", "--filter", "label=com.docker.compose.project="+p)
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		for _, id := range strings.Fields(string(out)) {
			left = append(left, kind[0]+" "+id)
		}
	}
	return left
}

// composeUp starts docker-compose.yml as project p, as a user's CI job
// starts its service (docker compose up -d --wait), and brings it down when
// t ends, checking nothing of it is left. It returns docker compose in the
// project, which fails t unless it succeeds, and gives its output.
func composeUp(t *testing.T, p string) func(args ...string) string {
	t.Helper()
	env := composetest.Env()
	docker := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("docker", append([]string{"compose", "-f", composetest.File(), "-p", p}, args...)...)
		cmd.Env, cmd.Dir = env, composetest.Root()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docker compose %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		docker("down", "-v", "--remove-orphans")
		if left := leftovers(t, p); len(left) > 0 {
			t.Errorf("after docker compose down: %v", left)
		}
	})
	docker("up", "-d", "--wait")
	return docker
}

// waitFor polls cond every 100ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s", what, d)
		case <-tick.C:
		}
	}
}

func readResults(t *testing.T, path string) experiment.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

// outcomesAddUp says whether every request of a arm ended in one outcome.
func outcomesAddUp(h result.HTTP) bool {
	e := h.Errors
	return h.OK+e.Timeout+e.Conn+e.E5xx+e.Shed+e.Other+e.Throttled+e.ClientBreaker+e.Unsent == h.Requests
}
