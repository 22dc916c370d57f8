package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command trigger's bad input exits 2 before anything runs, naming the
// flag, or the scenario file's line, and the accepted values.
func TestCommandTriggerBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "state")
	scenarioFile := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noRun := scenarioFile("norun.yaml", "load: {rate: 100}\ntrigger:\n  name: command\n  undo: echo undo\n")
	longUndo := scenarioFile("longundo.yaml", "trigger:\n  name: command\n  run: 'true'\n  undo: 'true'\n  undo_timeout: 2m\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--trigger", "command"},
			"--run: required with trigger command (accepted: a shell command, run with sh -c at T)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--run", "true"},
			"--run: set, and the plan's trigger is not command, so it would never run (accepted: with trigger command)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--trigger", "command", "--run", "true", "--undo-timeout", "2m"},
			"--undo-timeout: 2m0s out of range (accepted: more than 0, at most 1m0s, the limit of an arm's hook commands)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--trigger", "command", "--run", "true", "--command-timeout", "8s"},
			"--command-timeout: 8s is not shorter than after, 8s (accepted: shorter than after, so the arm sees the fault end)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--trigger", "command", "--run", "true", "--command-for", "9s"},
			"--command-for: 9s is not shorter than after, 8s"},
		{[]string{"run", "--dry-run", "--state-dir", empty, noRun},
			noRun + ":3: trigger.run: required with trigger command (accepted: a shell command, run with sh -c at T)"},
		{[]string{"run", "--dry-run", "--state-dir", empty, longUndo},
			longUndo + ":5: trigger.undo_timeout: 2m0s out of range (accepted: more than 0, at most 1m0s"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := herdbench(t, tt.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("herdbench %s = exit %d, stdout %q, stderr %q; want exit 2, nothing run, stderr containing %q",
					strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
			}
		})
	}
}

// A dry run prints the command and its undo, and runs neither.
func TestCommandDryRunRunsNothing(t *testing.T) {
	dir := t.TempDir()
	ran, undone := filepath.Join(dir, "ran"), filepath.Join(dir, "undone")
	code, stdout, stderr := herdbench(t, "stampede", "--dry-run", "--state-dir", filepath.Join(dir, "state"), "--trigger", "command",
		"--run", "touch "+ran, "--undo", "touch "+undone, "--command-timeout", "2s")
	if code != exitOK {
		t.Fatalf("dry run = exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{`run "touch ` + ran + `" with sh -c (killed after 2s; the trigger's end: its exit)`,
		`run its undo "touch ` + undone + `" (killed after 30s)`, "unsandboxed", "HERDBENCH_RESULTS_DIR"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run printed\n%s\nwant %q", stdout, want)
		}
	}
	for _, marker := range []string{ran, undone} {
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v; want no such file: a dry run runs no command", marker, err)
		}
	}
}
