package onservice_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// commandPlan is a short plan on one hot key, hammered through every
// replica, whose trigger is the user's command run, with its undo.
func commandPlan(run, undo string, arms ...string) plan.Plan {
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(200 * time.Millisecond)
	return plan.Plan{
		Arms: subject.ArmKinds.Arms(arms, replica.FullPatch(cfg)), Trigger: "command", HotKeys: 1, Keys: 1, Zipf: 1.1, Rate: 300, Clients: 1,
		Timeout: herd.Duration(2 * time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(1500 * time.Millisecond), Seed: 11,
		Triggers: TriggerOptions("run", run, "undo", undo, "command_timeout", "1s"),
	}
}

// lines reads a file the commands appended to, one entry a line.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

// The user's command is the invalidation at T: redis-cli unlinks the hot
// key, and the database sees the herd. It ran with the run's variables,
// its times are ordered from T, its end is its exit, and its undo ran
// once per arm. A command that fails fails its arm with its output, and
// its undo still runs; an undo that fails fails the arm with its output,
// whose results are kept.
func TestCommandTrigger(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 2)
	dir := t.TempDir()
	seen, undone, results := filepath.Join(dir, "seen"), filepath.Join(dir, "undone"), filepath.Join(dir, "results")
	key := tg.KeyOf(tg.Hot(1)[0])
	invalidate := fmt.Sprintf(`echo "$HERDBENCH_ARM $HERDBENCH_T $HERDBENCH_RESULTS_DIR $HERDBENCH_SEED" >> %s; redis-cli -u %s UNLINK %s`, seen, tg.Status.Redis, key)
	undo := `echo "$HERDBENCH_ARM:$HERDBENCH_EXIT_CODE" >> ` + undone

	t.Run("an invalidation at T", func(t *testing.T) {
		rep, err := Run(context.Background(), commandPlan(invalidate, undo, replica.None, replica.Singleflight), Env{Target: tg.Target, Subject: tg, ResultsDir: results})
		if err != nil {
			t.Fatal(err)
		}
		got := lines(t, seen)
		for i, a := range rep.Arms {
			d, ok := a.Trigger.Detail.(*triggers.CommandDetail)
			if !ok {
				t.Fatalf("%s: trigger detail %T; want *triggers.CommandDetail", a.Name, a.Trigger.Detail)
			}
			// redis-cli printed how many keys it unlinked: the hot key was there
			if d.ExitCode != 0 || strings.TrimSpace(d.Output) != "1" || d.StartedMS < 0 || d.ExitedMS < d.StartedMS {
				t.Errorf("%s: command %+v; want exit 0, one key unlinked, started at or after T, exited after it started", a.Name, d)
			}
			if e := a.Trigger.EndedMS; e == nil || *e != d.ExitedMS {
				t.Errorf("%s: trigger ended_ms %v; want the command's exit, %d", a.Name, e, d.ExitedMS)
			}
			if d.Undo == nil || d.Undo.ExitCode != 0 {
				t.Errorf("%s: undo %+v; want it run, exit 0", a.Name, d.Undo)
			}
			// the variables the command saw: its arm, T (fired at or after
			// it), the run's results directory, the seed
			if len(got) != 2 {
				t.Fatalf("the command saw %q; want one line per arm", got)
			}
			f := append(strings.Fields(got[i]), "", "", "", "")
			tt, err := time.Parse(time.RFC3339Nano, f[1])
			if err != nil || f[0] != a.Name || f[2] != results || f[3] != "11" || a.Trigger.FiredAt == nil || a.Trigger.FiredAt.Before(tt) {
				t.Errorf("%s: the command saw %q (T %v, %v), fired at %v; want its arm, T at or before firing, %s, seed 11", a.Name, got[i], tt, err, a.Trigger.FiredAt, results)
			}
		}
		if len(rep.Arms) != 2 {
			t.Fatalf("%d arms; want 2", len(rep.Arms))
		}
		// the herd the command caused: the one key's loads after T
		t.Logf("db.queries after T: none %d, singleflight %d", rep.Arms[0].DB.Queries, rep.Arms[1].DB.Queries)
		if none, sf := rep.Arms[0], rep.Arms[1]; none.DB.Queries < 10 || sf.DB.Queries >= none.DB.Queries {
			t.Errorf("db.queries after T: none %d, singleflight %d; want a herd without protection (10 or more loads of one key), fewer with singleflight",
				none.DB.Queries, sf.DB.Queries)
		}
		if u := lines(t, undone); !slices.Equal(u, []string{"none:0", "singleflight:0"}) {
			t.Errorf("undo ran %q; want once per arm, after its command exited 0", u)
		}
		if _, err := os.Stat(results); err != nil {
			t.Errorf("results directory: %v; want it made for the command", err)
		}
	})

	t.Run("a failing command", func(t *testing.T) {
		_ = os.Remove(undone)
		rep, err := Run(context.Background(), commandPlan("echo purge refused: 403 >&2; exit 7", undo, replica.None, replica.Lock), Env{Target: tg.Target, Subject: tg})
		if err == nil || !strings.Contains(err.Error(), `arm none: trigger command: command "echo purge refused: 403 >&2; exit 7": exit status 7: purge refused: 403`) {
			t.Errorf("Run error = %v; want the first arm failed with the command's exit status and output", err)
		}
		if rep == nil || !rep.Partial || len(rep.Arms) != 0 {
			t.Errorf("report %+v; want partial, with no arm", rep)
		}
		if u := lines(t, undone); !slices.Equal(u, []string{"none:7"}) {
			t.Errorf("undo ran %q; want once, for the failed arm, told its exit code", u)
		}
	})

	t.Run("a failing undo", func(t *testing.T) {
		rep, err := Run(context.Background(), commandPlan("redis-cli -u "+tg.Status.Redis+" UNLINK "+key, "echo rollback refused; exit 5", replica.None), Env{Target: tg.Target, Subject: tg})
		if err == nil || !strings.Contains(err.Error(), `arm none: trigger command: undo "echo rollback refused; exit 5": exit status 5: rollback refused`) {
			t.Errorf("Run error = %v; want the arm failed with the undo's exit status and output", err)
		}
		if rep == nil || !rep.Partial || len(rep.Arms) != 1 {
			t.Fatalf("report %+v; want partial, with the arm's results kept", rep)
		}
		if d := rep.Arms[0].Trigger.Detail.(*triggers.CommandDetail); d.ExitCode != 0 || d.Undo == nil || d.Undo.ExitCode != 5 || d.Undo.Output != "rollback refused\n" {
			t.Errorf("detail %+v, undo %+v; want the command's exit 0 and the undo's 5 with its output", d, d.Undo)
		}
	})

	t.Run("interrupted while the command runs", func(t *testing.T) {
		_ = os.Remove(undone)
		started := filepath.Join(t.TempDir(), "started")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, commandPlan("touch "+started+"; sleep 30", undo, replica.None), Env{Target: tg.Target, Subject: tg})
			done <- err
		}()
		// Ctrl-C once the command runs
		deadline := time.Now().Add(time.Minute)
		for {
			if _, err := os.Stat(started); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the command never started")
			}
			time.Sleep(10 * time.Millisecond) // polling for the file, with a deadline
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted Run = %v; want context.Canceled", err)
		}
		if u := lines(t, undone); !slices.Equal(u, []string{"none:-1"}) {
			t.Errorf("undo ran %q; want once, after the interrupted arm, told the command was killed (-1)", u)
		}
	})

	t.Run("on a service from a target file, between the arm's hooks", func(t *testing.T) {
		svc := asService(t, tg, "keys: {list: [\"1\", \"2\"], hot: 1}\n")
		log := filepath.Join(t.TempDir(), "order.log")
		// a hook saves what it saw in the run's results directory, which
		// does not exist yet: the hooks make it
		results := filepath.Join(t.TempDir(), "run")
		saved := `echo "$HERDBENCH_HOOK $HERDBENCH_ARM $HERDBENCH_ARM_INDEX" >> "$HERDBENCH_RESULTS_DIR/hooks.log"`
		sel := &arm.Select{Before: []string{`echo "$HERDBENCH_HOOK $HERDBENCH_ARM" >> ` + log, saved},
			After: []string{`echo "$HERDBENCH_HOOK $HERDBENCH_ARM" >> ` + log, saved}}
		p := servicePlan("command", arm.Arm{Name: "baseline", Select: sel}, arm.Arm{Name: "other", Select: sel})
		p.Triggers = TriggerOptions("run", `echo "run $HERDBENCH_ARM" >> `+log, "undo", "echo undo >> "+log, "command_timeout", "1s")
		if _, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}, ResultsDir: results}); err != nil {
			t.Fatal(err)
		}
		want := "before baseline\nrun baseline\nundo\nafter baseline\nbefore other\nrun other\nundo\nafter other\n"
		if b, err := os.ReadFile(log); err != nil || string(b) != want {
			t.Errorf("the hooks and the commands wrote %q, %v; want %q: before, the command at T, its undo, then after, each told its arm", b, err, want)
		}
		want = "before baseline 0\nafter baseline 0\nbefore other 1\nafter other 1\n"
		if b, err := os.ReadFile(filepath.Join(results, "hooks.log")); err != nil || string(b) != want {
			t.Errorf("the hooks saved %q, %v in the run's results directory; want %q, each told its arm's index", b, err, want)
		}
	})
}
