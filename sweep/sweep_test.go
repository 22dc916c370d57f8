package sweep

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
)

// threshold is a synthetic service: at a magnitude above x its runs end
// metastable, else recovered; calls counts its runs.
func threshold(x float64, calls *int) Runner {
	return func(_ context.Context, p plan.Plan, at []Setting) (*result.ArmResult, error) {
		*calls++
		v := result.Recovered
		if at[0].Value > x {
			v = result.Metastable
		}
		return &result.ArmResult{Name: p.Arms[0].Name, Verdict: v}, nil
	}
}

func pl(arms ...string) plan.Plan {
	p := plan.Plan{Trigger: "burst", Seed: 7}
	for _, a := range arms {
		p.Arms = append(p.Arms, arm.Arm{Name: a})
	}
	return p
}

func settings(repeat int) Settings {
	s := DefaultSettings
	s.Repeat = repeat
	return s
}

func TestBisection(t *testing.T) {
	for _, tt := range []struct {
		name        string
		ax          Axis
		x           float64
		state, text string
	}{
		{"count", Axis{Name: "burst", From: 10, To: 1000, Unit: Count}, 137, TipFound, ""},
		{"adjacent whole numbers", Axis{Name: "burst", From: 1, To: 8, Unit: Count}, 3, TipFound, "4"},
		{"duration in ms", Axis{Name: "slowdb_for", From: 500, To: 10_000, Unit: Milliseconds}, 2_345, TipFound, ""},
		{"the low end tips", Axis{Name: "burst", From: 10, To: 1000, Unit: Count}, 5, TipBelow, "<= 10"},
		{"the high end survives", Axis{Name: "burst", From: 10, To: 1000, Unit: Count}, 5000, TipNone, "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls int
			s := Sweep{Plan: pl("none", "lock"), Vary: &tt.ax, Settings: settings(1), Run: threshold(tt.x, &calls)}
			res, err := s.Do(context.Background())
			if err != nil || res.Partial {
				t.Fatalf("Do = %v, partial %v", err, res.Partial)
			}
			if len(res.Arms) != 2 || calls != res.Arms[0].Runs+res.Arms[1].Runs {
				t.Fatalf("arms %d, calls %d; want 2 arms whose runs add up to the calls", len(res.Arms), calls)
			}
			for _, a := range res.Arms {
				tp, b := a.Tipping, a.Bracket
				if tp.State != tt.state || tt.text != "" && tp.Text != tt.text {
					t.Errorf("%s: tipping %s %q; want %s %q", a.Name, tp.State, tp.Text, tt.state, tt.text)
				}
				if a.Probes > s.WorstProbes() || a.Probes != len(a.Probed) {
					t.Errorf("%s: %d probes (%d kept); want at most WorstProbes = %d, all kept", a.Name, a.Probes, len(a.Probed), s.WorstProbes())
				}
				if tt.state != TipFound {
					continue
				}
				lo, hi := *b.Survived, *b.Tipped
				if !(lo <= tt.x && tt.x < hi) || !(hi-lo <= 1 || hi/lo <= 1+s.Settings.Resolution) {
					t.Errorf("%s: bracket [%v, %v]; want it to hold %v, within %v", a.Name, lo, hi, tt.x, s.Settings.Resolution)
				}
				if *tp.Value != hi {
					t.Errorf("%s: tipping %v; want the smallest tipped, %v", a.Name, *tp.Value, hi)
				}
			}
		})
	}
}

// A probe tips when at least half its runs did not recover; it stops once
// the majority is decided; every run is kept.
func TestMajority(t *testing.T) {
	for _, tt := range []struct {
		verdicts []string // the runs' in turn
		repeat   int
		runs     int
		tipped   bool
		verdict  string
	}{
		{[]string{"recovered", "recovered", "metastable"}, 3, 2, false, "recovered"},
		{[]string{"recovered", "degraded", "metastable"}, 3, 3, true, "metastable"},
		{[]string{"degraded", "recovered", "recovered"}, 3, 3, false, "recovered"},
		{[]string{"recovered", "degraded"}, 2, 2, true, "degraded"}, // a tie tips
		{[]string{"metastable"}, 1, 1, true, "metastable"},
	} {
		t.Run(fmt.Sprint(tt.verdicts, tt.repeat), func(t *testing.T) {
			i := 0
			run := func(context.Context, plan.Plan, []Setting) (*result.ArmResult, error) {
				v := tt.verdicts[i]
				i++
				return &result.ArmResult{Verdict: v}, nil
			}
			s := Sweep{Plan: pl("none"), Grid: []GridAxis{{Name: "burst", Values: []float64{10}, Unit: Count}}, Settings: settings(tt.repeat), Run: run}
			res, err := s.Do(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p := res.Arms[0].Probed[0]
			if len(p.Runs) != tt.runs || p.Tipped != tt.tipped || p.Verdict != tt.verdict {
				t.Errorf("probe = %d runs, tipped %v, %s; want %d, %v, %s", len(p.Runs), p.Tipped, p.Verdict, tt.runs, tt.tipped, tt.verdict)
			}
		})
	}
}

func TestCaps(t *testing.T) {
	ax := Axis{Name: "burst", From: 10, To: 1000, Unit: Count}
	t.Run("max runs", func(t *testing.T) {
		var calls int
		s := Sweep{Plan: pl("none", "lock"), Vary: &ax, Settings: settings(1), Run: threshold(137, &calls)}
		s.Settings.MaxRuns = 4
		res, err := s.Do(context.Background())
		if err != nil || calls != 4 || !res.Partial || res.Stopped != StoppedMaxRuns || len(res.Arms) != 1 {
			t.Fatalf("Do = %v: %d calls, partial %v, stopped %q, %d arms; want 4 calls, stopped max_runs, the first arm only", err, calls, res.Partial, res.Stopped, len(res.Arms))
		}
		a := res.Arms[0]
		if a.Tipping.State != TipUnknown || a.Stopped != StoppedMaxRuns || *a.Bracket.Survived < 10 || *a.Bracket.Tipped > 1000 || len(a.Probed) != 4 {
			t.Errorf("arm = %+v, bracket %s; want unknown, its bracket so far and its 4 probes", *a.Tipping, BracketText(a.Bracket))
		}
	})
	t.Run("max time", func(t *testing.T) {
		now := time.Unix(0, 0)
		var calls int
		inner := threshold(137, &calls)
		run := func(ctx context.Context, p plan.Plan, at []Setting) (*result.ArmResult, error) {
			now = now.Add(10 * time.Second)
			return inner(ctx, p, at)
		}
		s := Sweep{Plan: pl("none"), Vary: &ax, Settings: settings(1), Run: run, Now: func() time.Time { return now }}
		s.Settings.MaxTime = herd.Duration(25 * time.Second)
		res, _ := s.Do(context.Background())
		if calls != 3 || res.Stopped != StoppedMaxTime {
			t.Errorf("%d calls, stopped %q; want 3 (the third starts at 20s < 25s), max_time", calls, res.Stopped)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var calls int
		inner := threshold(137, &calls)
		run := func(ctx context.Context, p plan.Plan, at []Setting) (*result.ArmResult, error) {
			if calls == 2 {
				cancel()
				return nil, ctx.Err()
			}
			return inner(ctx, p, at)
		}
		s := Sweep{Plan: pl("none"), Vary: &ax, Settings: settings(1), Run: run}
		res, err := s.Do(ctx)
		if err == nil || res.Stopped != StoppedInterrupted || len(res.Arms[0].Probed) != 2 {
			t.Errorf("Do = %v, stopped %q, %d probes; want interrupted with the 2 probes done", err, res.Stopped, len(res.Arms[0].Probed))
		}
	})
}

func TestGrid(t *testing.T) {
	var calls int
	grid := []GridAxis{{Name: "rate", Values: []float64{100, 300}, Unit: Count}, {Name: "burst", Values: []float64{10, 100, 1000}, Unit: Count}}
	s := Sweep{Plan: pl("none"), Grid: grid, Settings: settings(1), Run: threshold(150, &calls)}
	if s.WorstProbes() != 6 {
		t.Fatalf("WorstProbes = %d; want 6 cells", s.WorstProbes())
	}
	res, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Arms[0].Probed {
		got = append(got, AtText(p.At)+" "+p.Verdict)
	}
	want := "[rate=100 burst=10 recovered rate=100 burst=100 recovered rate=100 burst=1000 recovered rate=300 burst=10 metastable rate=300 burst=100 metastable rate=300 burst=1000 metastable]"
	if fmt.Sprint(got) != want {
		t.Errorf("cells = %v; want %s", got, want)
	}
}
