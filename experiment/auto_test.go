package experiment_test

import (
	"context"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// An arm run with --after auto ends once it has recovered and held, long
// before its MAX, on a row's edge; its after window ends there: the
// timeline, the requests counted (one per intended instant, none lost to
// the cut), the goodput and the generator's figures all cover the same
// span. A stop condition on the verdict ends an arm the same way, and
// says so in aborted.
func TestAnArmEndsOnItsVerdict(t *testing.T) {
	tg := startTestbed(t, 1)
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(50 * time.Millisecond)
	const rate = 200
	p := plan.Plan{
		Arms: arm.ClientKinds.Arms([]string{replica.Lock}, replica.FullPatch(cfg)), Trigger: "expire", HotKeys: 10, Keys: 100, Zipf: 1.1, Rate: rate,
		Clients: 10, Timeout: herd.Duration(time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(30 * time.Second), AfterAuto: true, Seed: 11,
	}
	stop, err := gates.Parse("verdict == recovered")
	if err != nil {
		t.Fatal(err)
	}
	fixed := p
	fixed.AfterAuto, fixed.Abort = false, []gates.Gate{stop}
	for _, tt := range []struct {
		name    string
		p       plan.Plan
		aborted bool
	}{{"after auto", p, false}, {"verdict == recovered", fixed, true}} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(context.Background(), tt.p, Env{Target: tg.Target, Subject: tg})
			if err != nil {
				t.Fatal(err)
			}
			a := rep.Arms[0]
			if a.Timing.AfterMS == nil {
				t.Fatalf("verdict %s, timing %+v; want the arm ended on its verdict (timing.after_ms)", a.Verdict, a.Timing)
			}
			after := *a.Timing.AfterMS
			t.Logf("verdict %s, recovery from T %v ms, ended at T+%d ms, %d requests", a.Verdict, deref(a.RecoveryFromTMS), after, a.HTTP.Requests)
			if a.Verdict != result.Recovered || a.RecoveryFromTMS == nil || *a.RecoveryFromTMS+verdict.RecoveryHold.Milliseconds() > after {
				t.Errorf("verdict %s, recovery from T %v ms, ended at T+%d ms; want recovered and held before the end", a.Verdict, deref(a.RecoveryFromTMS), after)
			}
			if after >= time.Duration(p.After).Milliseconds() || after%result.RowWidth.Milliseconds() != 0 {
				t.Errorf("ended at T+%d ms; want before the %s most, on a row's edge", after, p.After)
			}
			if last := a.Timeline[len(a.Timeline)-1].TMS; last != after-result.RowWidth.Milliseconds() {
				t.Errorf("the timeline's last row at %d ms; want the row ending at the cut, %d", last, after-result.RowWidth.Milliseconds())
			}
			if want := int64(rate) * after / 1000; a.HTTP.Requests != want || a.HTTP.Errors.Unsent != 0 {
				t.Errorf("http.requests %d (%d unsent); want %d, one per instant intended up to the cut, every one sent", a.HTTP.Requests, a.HTTP.Errors.Unsent, want)
			}
			if want := int64(rate) * (time.Duration(p.Before).Milliseconds() + after) / 1000; a.Load.Intended != want {
				t.Errorf("load.intended %d; want %d, before and after up to the cut", a.Load.Intended, want)
			}
			goodputIsTheClientsOK(t, a)
			if got := a.Aborted != nil && a.Aborted.Gate == "verdict == recovered"; got != tt.aborted {
				t.Errorf("aborted = %+v; want it set by the stop condition: %v", a.Aborted, tt.aborted)
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
