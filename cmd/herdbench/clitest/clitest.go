// Package clitest runs the built herdbench binary in tests as a user runs
// it, and reads what it wrote: its exit codes, an experiment's results
// (a gate's among them) and a sweep's. The command's own tests and the packages that hold its
// longest whole runs (cmd/herdbench/runs, cmd/herdbench/sweeps) share it,
// so that a whole run can live beside the command's tests or apart from
// them, and go test runs the packages side by side.
//
// The binary is the one localtest.Main built for the test process.
package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// herdbench's exit codes, as the README gives them; cmd/herdbench's
// TestExitCodes holds them to the command's own.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitGatesFailed = 99
)

// Run runs the binary with args in env (nil: this process's) and returns
// its exit code and output.
func Run(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return localtest.Run(t, env, args...)
}

// StateDir is a new state directory whose testbed, if the test left one
// running, is brought down when t ends.
func StateDir(t *testing.T) string {
	t.Helper()
	dir := localtest.StateDir(t)
	t.Cleanup(func() { Run(t, nil, "testbed", "down", "--state-dir", dir) })
	return dir
}

// ReadResults reads the results JSON at path.
func ReadResults(t *testing.T, path string) experiment.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("results: %v", err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("results %s: %v", path, err)
	}
	return rep
}

// ReadSweep reads the one sweep.json under dir.
func ReadSweep(t *testing.T, dir string) *sweep.Results {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "*", "sweep.json"))
	if len(found) != 1 {
		t.Fatalf("results under %s: %v; want one sweep.json", dir, found)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	var res sweep.Results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("%s: %v", found[0], err)
	}
	return &res
}

// Gate is the gate written expr in the results of the one run under dir.
func Gate(t *testing.T, dir, expr string) gates.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "results.json"))
	if len(files) != 1 {
		t.Fatalf("results files under %s: %v; want one", dir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Gates []gates.Result `json:"gates"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gates {
		if g.Gate == expr {
			return g
		}
	}
	t.Fatalf("no gate %q in %s", expr, b)
	return gates.Result{}
}

// Environ is this process' environment without the variables unset names.
func Environ(unset []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(unset, name) {
			out = append(out, kv)
		}
	}
	return out
}
