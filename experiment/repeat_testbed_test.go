package experiment_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Two arms run twice on the real testbed: the runs interleave (none, lock,
// none, lock), each arm keeps both, and its figures are their medians.
func TestRepeatInterleavesRunsOnTheTestbed(t *testing.T) {
	tg := startTestbed(t, 2)
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(50 * time.Millisecond)
	p := plan.Plan{
		Arms:    arm.ClientKinds.Arms([]string{replica.None, replica.Lock}, replica.FullPatch(cfg)),
		Trigger: "expire", HotKeys: 5, Keys: 20, Zipf: 1.1, Rate: 100, Clients: 1,
		Timeout: herd.Duration(2 * time.Second), Warmup: herd.Duration(200 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(time.Second), Seed: 7,
		Repeat: 2,
	}
	var rounds []int // the round of every progress report, in order
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg, Version: "test", Progress: func(pr Progress) {
		if len(rounds) == 0 || rounds[len(rounds)-1] != pr.Run {
			rounds = append(rounds, pr.Run)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Arms) != 2 {
		t.Fatalf("%d arms; want 2", len(rep.Arms))
	}
	if rounds[0] != 1 || rounds[len(rounds)-1] != 2 || len(rounds) != 2 {
		t.Errorf("progress rounds %v; want [1 2]", rounds)
	}
	none, lock := rep.Arms[0], rep.Arms[1]
	for _, a := range rep.Arms {
		if len(a.Runs) != 2 {
			t.Fatalf("arm %s has %d runs; want 2", a.Name, len(a.Runs))
		}
	}
	// interleaved: none's first run, lock's first, none's second, lock's second
	order := []time.Time{none.Runs[0].T, lock.Runs[0].T, none.Runs[1].T, lock.Runs[1].T}
	for i := 1; i < len(order); i++ {
		if !order[i].After(order[i-1]) {
			t.Errorf("run %d's T %s is not after run %d's %s: the runs are not interleaved", i+1, order[i], i, order[i-1])
		}
	}
	for _, a := range rep.Arms {
		q0, q1 := a.Runs[0].DB.Queries, a.Runs[1].DB.Queries
		if want := (q0 + q1 + 1) / 2; a.DB.Queries != want {
			t.Errorf("arm %s: db.queries %d; want the median of %d and %d, %d", a.Name, a.DB.Queries, q0, q1, want)
		}
		s, ok := a.SpreadOf("db.queries")
		if !ok || *s.Min != float64(min(q0, q1)) || *s.Max != float64(max(q0, q1)) {
			t.Errorf("arm %s: spread of db.queries %+v; want %d–%d", a.Name, s, min(q0, q1), max(q0, q1))
		}
		if p99 := a.HTTP.P99MS; p99 < min(a.Runs[0].HTTP.P99MS, a.Runs[1].HTTP.P99MS) || p99 > max(a.Runs[0].HTTP.P99MS, a.Runs[1].HTTP.P99MS) {
			t.Errorf("arm %s: p99 %g outside its runs' %g and %g", a.Name, p99, a.Runs[0].HTTP.P99MS, a.Runs[1].HTTP.P99MS)
		}
		if len(a.Timeline) == 0 {
			t.Errorf("arm %s has no timeline; want its representative run's", a.Name)
		}
	}
}

// Cancelled in the second round, a repeated run keeps the runs that
// finished: none twice, lock once, each arm saying how many it had.
func TestRepeatCancelledKeepsTheRunsThatFinished(t *testing.T) {
	tg := startTestbed(t, 1)
	p := plan.Plan{
		Arms:    arm.ClientKinds.Arms([]string{replica.None, replica.Lock}, replica.FullPatch(replica.DefaultConfig)),
		Trigger: "expire", HotKeys: 5, Keys: 50, Zipf: 1.1, Rate: 100, Clients: 1,
		Timeout: herd.Duration(time.Second), Before: herd.Duration(time.Second), After: herd.Duration(time.Second), Seed: 1,
		Repeat: 2,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := Run(ctx, p, Env{Target: tg.Target, Subject: tg, Progress: func(pr Progress) {
		if pr.Run == 2 && pr.Arm == 2 && pr.Phase == "before" {
			cancel() // lock's second run
		}
	}})
	if err == nil || rep == nil {
		t.Fatalf("Run cancelled in round 2 = %v, %v; want a partial report and an error", rep, err)
	}
	if !rep.Partial || len(rep.Arms) != 2 || !strings.Contains(rep.Error, "lock, run 2 of 2") {
		t.Fatalf("partial report: partial %v, %d arms, error %q; want partial, both arms, and lock's run 2 of 2 named", rep.Partial, len(rep.Arms), rep.Error)
	}
	if n, l := len(rep.Arms[0].Runs), len(rep.Arms[1].Runs); n != 2 || l != 1 {
		t.Errorf("runs kept: none %d, lock %d; want 2 and 1", n, l)
	}
	if q := rep.Arms[1].DB.Queries; q != rep.Arms[1].Runs[0].DB.Queries {
		t.Errorf("lock's db.queries %d; want its one run's, %d", q, rep.Arms[1].Runs[0].DB.Queries)
	}
}
