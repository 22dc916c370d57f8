package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/targets"
)

// The fuzzers run herdbench in this process on what a user may type or
// write, with nothing started: stampede, run and sweep with --dry-run,
// kube (which prints), worker on a canceled context and loopback, and
// testbed up's flags and checks without Ensure. A panic fails them; so
// does an exit other than 0, 1 and 2, an exit 2 that does not say why, or
// a dry run that exits 0 without its plan, or whose plan fails the plan's
// own validation. `go test` runs their seeds (the bad-input table and the
// examples) and, with the same checks, a seeded random exploration bounded
// in time (fuzz_explore_test.go); `go test -fuzz` explores further.

// FuzzCommandLine takes a command line, one argument a line.
func FuzzCommandLine(f *testing.F) {
	for _, kind := range slices.Sorted(maps.Keys(badInputs)) {
		for _, in := range badInputs[kind] {
			if len(in.files) == 0 {
				f.Add(strings.Join(in.args, "\n"))
			}
		}
	}
	for _, args := range [][]string{
		{"stampede", "--arms", "none,lock+ttl_jitter", "--rate", "500", "--ttl-jitter", "0.2"},
		{"stampede", "--trigger", "outage", "--outage", "2s", "--retry", "exp:100ms:1s:3", "--gate", "lock:db.queries <= 120"},
		{"stampede", "--trigger", "command", "--run", "true", "--undo", "true", "--undo-timeout", "5s"},
		{"stampede", "--target", "http://127.0.0.1:1/items/{key}", "--zipf", "1e308"},
		{"sweep", "--trigger", "burst", "--vary", "burst=10..2000", "--resolution", "NaN"},
		{"sweep", "--trigger", "expire", "--grid", "rate=300,1000", "hot_keys=10,100"},
		{"kube", "--", "stampede", "--rate", "-1"},
		{"testbed", "up", "--tiers", "2", "--edge-retry", "immediate:2", "--xfetch-beta", "-Inf"},
		{"worker", "--idle-timeout", "-1s"},
	} {
		f.Add(strings.Join(args, "\n"))
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\n")
		checkCommandLine(t, args, t.TempDir())
	})
}

// FuzzScenarioFile runs `run --dry-run` on a scenario file.
func FuzzScenarioFile(f *testing.F) {
	addFiles(f, "../../examples/*.yaml")
	f.Add("load:\n  zipf: .inf\narms: []\ngates:\n  - \"db.queries => 1\"\n")
	f.Add("arms:\n  - name: j\n    strategy: ttl_jitter\n    knobs: {ttl_jitter: .nan}\n")
	f.Fuzz(func(t *testing.T, content string) { checkScenarioFile(t, content, t.TempDir()) })
}

// checkScenarioFile runs `run --dry-run` on content as a scenario file in
// dir, as FuzzScenarioFile does.
func checkScenarioFile(t *testing.T, content, dir string) {
	t.Helper()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	checkCommandLine(t, []string{"run", path}, dir)
}

// FuzzTargetFile runs `stampede --dry-run --target` on a target file.
func FuzzTargetFile(f *testing.F) {
	addFiles(f, "../../examples/*service*.yaml")
	addFiles(f, "../../examples/staging.yaml")
	f.Add("name: t\nendpoints: [http://127.0.0.1:1]\nrequest: {path: /items/{key}}\nkeys: {zipf: {from: 1, to: 100, s: .nan}, hot: 10}\n")
	f.Fuzz(func(t *testing.T, content string) { checkTargetFile(t, content, t.TempDir()) })
}

// checkTargetFile runs `stampede --dry-run --target` on content as a
// target file in dir, as FuzzTargetFile does.
func checkTargetFile(t *testing.T, content, dir string) {
	t.Helper()
	path := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	checkCommandLine(t, []string{"stampede", "--target", path}, dir)
}

// checkCommandLine runs args as the fuzzers do, in dir.
func checkCommandLine(t *testing.T, args []string, dir string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	var stdout, stderr bytes.Buffer
	// the plan a dry run prints passes the plan's own validation, on the
	// target it was checked against
	var invalid error
	ctx := context.WithValue(context.Background(), planSeen{}, func(p plan.Plan, tg *targets.Target, sub plan.Subject) {
		if tg == nil {
			invalid = p.Validate()
			return
		}
		invalid = p.ValidateFor(tg, sub)
	})
	switch {
	case slices.Contains([]string{"stampede", "run", "sweep"}, args[0]):
		// last, so the fuzzed line cannot turn them off
		args = append(slices.Clone(args), "--dry-run", "--state-dir", filepath.Join(dir, "state"), "--results-dir", filepath.Join(dir, "results"))
	case args[0] == "kube", args[0] == "report", args[0] == "triggers", args[0] == "mitigations":
	case args[0] == "worker":
		c, cancel := context.WithCancel(ctx)
		cancel() // it stops as soon as it listens
		ctx, args = c, append(slices.Clone(args), "--listen", "127.0.0.1:0")
	case len(args) > 1 && args[0] == "testbed" && args[1] == "up":
		checkUp(args[2:])
		return
	default:
		return // the other commands start or stop things
	}
	code := run(ctx, args, &stdout, &stderr)
	switch {
	case code == exitUsage && !strings.HasPrefix(stderr.String(), "herdbench: "):
		t.Errorf("herdbench %q = exit 2 with stderr %q; want it to say why", args, stderr.String())
	case code == exitOK && args[0] != "kube" && slices.Contains(args, "--dry-run") && !strings.Contains(stdout.String(), "dry run: nothing was sent"):
		t.Errorf("herdbench %q = exit 0 with stdout %q; want the dry run's plan", args, stdout.String())
	case code != exitOK && code != exitError && code != exitUsage && code != exitGatesFailed:
		t.Errorf("herdbench %q = exit %d; want 0, 1, 2 or 99", args, code)
	case code == exitOK && invalid != nil:
		t.Errorf("herdbench %q = exit 0, and the plan its dry run printed fails its own validation: %v", args, invalid)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Errorf("herdbench %q wrote its state directory; want nothing started", args)
	}
}

// checkUp parses testbed up's flags and runs its checks, and the ones
// Ensure makes before it starts anything, without Ensure
// (testbedcmd.CheckUp), telling a flag's error as the root does.
func checkUp(args []string) {
	if err := testbedcmd.CheckUp(args); err != nil {
		_ = flagValueError(err).Error()
	}
}

// addFiles adds the content of the files glob matches as seeds.
func addFiles(f *testing.F, glob string) {
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files %s: %v", glob, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}
