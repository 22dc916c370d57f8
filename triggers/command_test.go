package triggers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// command is a command trigger with its defaults and run, undo set.
func command(run, undo string) *Command {
	c := NewCommand()
	c.Run, c.Undo = run, undo
	return c
}

// The command runs with the run's variables, its output is kept, and its
// undo runs once, however often it is asked, with the command's exit code.
func TestCommandRunsAndUndoesOnce(t *testing.T) {
	dir := t.TempDir()
	seen, undone := filepath.Join(dir, "seen"), filepath.Join(dir, "undone")
	c := command(`echo "$HERDBENCH_ARM $HERDBENCH_T $HERDBENCH_RESULTS_DIR $HERDBENCH_SEED" > `+seen+`; echo hello; echo oops >&2`,
		`echo "undo $HERDBENCH_EXIT_CODE" >> `+undone)
	env := Env{Arm: "lock", T: time.Date(2026, 11, 25, 13, 0, 0, 123456789, time.UTC), ResultsDir: filepath.Join(dir, "results"), Seed: 42}
	armed, err := c.Prepare(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(env.ResultsDir); err != nil {
		t.Errorf("Prepare left no results directory: %v; want it made, for the command to write in", err)
	}
	f, err := armed.Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	d := f.Detail.(*CommandDetail)
	if d.ExitCode != 0 || d.Output != "hello\noops\n" || d.Truncated || d.ExitedMS < d.StartedMS || f.Ended.IsZero() {
		t.Errorf("Fire = %+v, ended %v; want exit 0, output hello and oops, exited after it started, an end", d, f.Ended)
	}
	b, _ := os.ReadFile(seen)
	if want := "lock 2026-11-25T13:00:00.123456789Z " + env.ResultsDir + " 42\n"; string(b) != want {
		t.Errorf("the command saw %q; want %q", b, want)
	}
	u := armed.(Undoer)
	for range 3 {
		if err := u.Undo(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(undone); string(b) != "undo 0\n" {
		t.Errorf("undo file = %q; want the undo run once, with the command's exit code 0", b)
	}
	if d.Undo == nil || d.Undo.ExitCode != 0 {
		t.Errorf("detail's undo = %+v; want its outcome, exit 0", d.Undo)
	}
}

// A command that fails fails the trigger with its output; its undo still
// runs, and one that fails says so with its own output.
func TestCommandFailureKeepsItsOutput(t *testing.T) {
	undone := filepath.Join(t.TempDir(), "undone")
	c := command("echo cache purge refused >&2; exit 3", "echo $HERDBENCH_EXIT_CODE >> "+undone+"; echo rollback failed; exit 4")
	armed, _ := c.Prepare(context.Background(), Env{})
	f, err := armed.Fire(context.Background(), Env{T: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "exit status 3: cache purge refused") {
		t.Errorf("Fire error = %v; want exit status 3 with the output", err)
	}
	if d := f.Detail.(*CommandDetail); d.ExitCode != 3 {
		t.Errorf("exit code %d; want 3", d.ExitCode)
	}
	err = armed.(Undoer).Undo(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 4: rollback failed") {
		t.Errorf("Undo error = %v; want exit status 4 with the output", err)
	}
	if b, _ := os.ReadFile(undone); string(b) != "3\n" {
		t.Errorf("undo file = %q; want the undo run once, told the command's exit code 3", b)
	}
}

// An undo runs only when the command started: an arm stopped before T
// has nothing to undo.
func TestCommandUndoNeedsAStart(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "undone")
	armed, _ := command("true", "touch "+marker).Prepare(context.Background(), Env{})
	if err := armed.(Undoer).Undo(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("undo ran without the command: %v; want no marker", err)
	}
}

// A command past its timeout is killed with every process of its group,
// so a pipeline that holds the output does not keep Fire waiting; an
// interrupted run kills it too, and its undo still runs.
func TestCommandTimeoutKillsTheGroup(t *testing.T) {
	c := command("echo started; sleep 60 | cat", "")
	c.Timeout = herd.Duration(200 * time.Millisecond)
	f, err := c.Fire(context.Background(), Env{T: time.Now()})
	d := f.Detail.(*CommandDetail)
	if err == nil || !strings.Contains(err.Error(), "timed out after 200ms, killed: started") || !d.TimedOut || d.ExitCode != -1 {
		t.Errorf("Fire = %+v, %v; want timed out, killed, exit -1, with its output", d, err)
	}

	marker := filepath.Join(t.TempDir(), "undone")
	c = command("sleep 60 | cat", "touch "+marker)
	ctx, cancel := context.WithCancel(context.Background())
	armed, _ := c.Prepare(ctx, Env{})
	done := make(chan error, 1)
	go func() {
		_, err := armed.Fire(ctx, Env{T: time.Now()})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted Fire = %v; want context.Canceled", err)
	}
	if err := armed.(Undoer).Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the undo did not run after an interrupted command: %v", err)
	}
}

// The output kept is the end of it, cut to OutputLimit bytes.
func TestCommandOutputIsBounded(t *testing.T) {
	f, err := command("seq 1 5000; echo last", "").Fire(context.Background(), Env{T: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	d := f.Detail.(*CommandDetail)
	if len(d.Output) != OutputLimit || !d.Truncated || !strings.HasSuffix(d.Output, "5000\nlast\n") {
		t.Errorf("output of %d bytes, truncated %v, ending %q; want the last %d bytes, truncated", len(d.Output), d.Truncated, d.Output[max(0, len(d.Output)-12):], OutputLimit)
	}
}

// command_for sets the trigger's end, and Fire returns at it.
func TestCommandForIsTheEnd(t *testing.T) {
	c := command("true", "")
	c.For = herd.Duration(300 * time.Millisecond)
	t0 := time.Now()
	f, err := c.Fire(context.Background(), Env{T: t0})
	if err != nil {
		t.Fatal(err)
	}
	if f.Ended.Before(t0.Add(300*time.Millisecond)) || time.Now().Before(f.Ended) {
		t.Errorf("ended %v after T, returned before it; want an end 300ms after firing, and Fire to return once it passed", f.Ended.Sub(t0))
	}
}

func TestCommandValidation(t *testing.T) {
	for _, tt := range []struct {
		name   string
		set    func(*Command)
		chosen bool
		want   string
	}{
		{"no run", func(*Command) {}, true, "run: required with trigger command (accepted: a shell command, run with sh -c at T)"},
		{"blank run", func(c *Command) { c.Run = "  " }, true, "run: required with trigger command"},
		{"run without the trigger", func(c *Command) { c.Run = "true" }, false, "run: set, and the plan's trigger is not command"},
		{"undo without the trigger", func(c *Command) { c.Undo = "true" }, false, "undo: set, and the plan's trigger is not command"},
		{"zero timeout", func(c *Command) { c.Run, c.Timeout = "true", 0 }, true, "command_timeout: 0s out of range (accepted: more than 0, at most 5m0s)"},
		{"long undo", func(c *Command) { c.Run, c.UndoTimeout = "true", herd.Duration(2*time.Minute) }, true,
			"undo_timeout: 2m0s out of range (accepted: more than 0, at most 1m0s, the limit of an arm's hook commands)"},
		{"negative for", func(c *Command) { c.Run, c.For = "true", -1 }, true, "command_for: -1ns out of range (accepted: 0, the command's exit, to 1m)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCommand()
			tt.set(c)
			errs := append(c.Validate(), c.CheckChosen(tt.chosen)...)
			if err := errs.Err(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("problems = %v; want %q", err, tt.want)
			}
		})
	}
	c := command("true", "")
	if errs := append(c.Validate(), c.CheckChosen(true)...); len(errs) > 0 {
		t.Errorf("a command with its defaults: %v; want no problem", errs.Err())
	}
}
