package sweep

import (
	"context"
	"testing"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
)

// With --escape, a probe carries its escape load: how many of its runs
// stepped their load down (those judged metastable), and the median rate
// at which those that came back did. A synthetic service stuck above a
// burst of 100, which comes back at a load that falls as the burst grows
// (the hysteresis the escape curve draws), and not at all past 400.
func TestAProbeCarriesItsEscapeLoad(t *testing.T) {
	run := func(_ context.Context, p plan.Plan, at []Setting) (*result.ArmResult, error) {
		res := &result.ArmResult{Name: p.Arms[0].Name, Verdict: result.Recovered}
		if b := at[0].Value; b > 100 {
			start := int64(5000)
			res.Verdict = result.Metastable
			res.Escape = &result.EscapeResult{FromRPS: 200, StartMS: &start}
			if b <= 400 {
				rps := 200 * 100 / b
				res.Escape.RPS = &rps
			}
		}
		return res, nil
	}
	s := Sweep{Plan: pl("none"), Grid: []GridAxis{{Name: "burst", Values: []float64{50, 200, 400, 800}, Unit: Count}}, Settings: settings(1), Run: run}
	res, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		tried int
		rps   float64 // 0: none
	}{{0, 0}, {1, 100}, {1, 50}, {1, 0}} {
		p := res.Arms[0].Probed[i]
		got := 0.0
		if p.EscapeRPS != nil {
			got = *p.EscapeRPS
		}
		if p.EscapeTried != want.tried || got != want.rps {
			t.Errorf("probe at %s: escape tried %d, rps %v; want %d, %v", AtText(p.At), p.EscapeTried, got, want.tried, want.rps)
		}
	}
}

// The escape load of a probe of several runs is the median of those
// that came back; a run that stepped down and never came back counts as
// tried.
func TestAProbesEscapeIsTheMedianOfItsRuns(t *testing.T) {
	rate := func(v float64) *float64 { return &v }
	start := int64(4000)
	p := Probe{Runs: []Run{
		{Result: result.ArmResult{Escape: &result.EscapeResult{StartMS: &start, RPS: rate(150)}}},
		{Result: result.ArmResult{Escape: &result.EscapeResult{StartMS: &start}}}, // stepped down, never back
		{Result: result.ArmResult{Escape: &result.EscapeResult{StartMS: &start, RPS: rate(50)}}},
		{Result: result.ArmResult{Escape: &result.EscapeResult{StartMS: &start, RPS: rate(100)}}},
		{Result: result.ArmResult{Escape: &result.EscapeResult{}}}, // recovered: never stepped down
	}}
	p.escapeOf()
	if p.EscapeTried != 4 || p.EscapeRPS == nil || *p.EscapeRPS != 100 {
		t.Errorf("escapeOf: tried %d, rps %v; want 4 tried, the median of 50, 100, 150: 100", p.EscapeTried, p.EscapeRPS)
	}
}
