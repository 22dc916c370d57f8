package grafana

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
)

// windows are a run's load windows, as its command line set them.
type windows struct{ warmup, before, after time.Duration }

// courseIsTheResults checks what Prometheus scraped of the harness'
// phases, verdicts and loop ratios against the results of the same run,
// each derived here from the results alone: a phase's instant from T and
// the windows (the fill before the warm-up by at least the fill's time,
// the drain after the load and before the next arm's fill), the verdict at
// T + recovery_from_t_ms when recovered (else the end of the timeline),
// each loop ratio as the results have it. It waits, to a deadline, for the
// last arm's, which the harness serves a last scrape of as it exits.
func courseIsTheResults(t *testing.T, prom string, arms []result.ArmResult, w windows, start, end time.Time) {
	t.Helper()
	ms := func(at time.Time) float64 { return float64(at.UnixNano()) / 1e6 }
	var problems []string
	check := func() {
		problems = problems[:0]
		phases := rangeValues(t, prom, `max by (arm, phase) (herdbench_phase_timestamp_seconds) * 1000`, start, end, "arm", "phase")
		verdicts := rangeValues(t, prom, `max by (arm, verdict) (herdbench_verdict_timestamp_seconds) * 1000`, start, end, "arm", "verdict")
		ratios := rangeValues(t, prom, `herdbench_loop_ratio`, start, end, "arm", "figure")
		for i, a := range arms {
			want := map[string]float64{
				"warmup": ms(a.T.Add(-w.before - w.warmup)), "before": ms(a.T.Add(-w.before)), "after": ms(a.T)}
			for phase, at := range want {
				if v := phases[a.Name+" "+phase]; phase == "warmup" && w.warmup == 0 && len(v) == 0 {
					continue // no warm-up: the load began in the before window
				}
				if v := phases[a.Name+" "+phase]; len(v) != 1 || math.Abs(v[0]-at) > 1 {
					problems = append(problems, fmt.Sprintf("arm %s: phase %s marked at %v ms; want once, at %.0f", a.Name, phase, v, at))
				}
			}
			fill, drain := phases[a.Name+" fill"], phases[a.Name+" drain"]
			if len(fill) != 1 || fill[0] > want["warmup"]-float64(a.Timing.FillMS) {
				problems = append(problems, fmt.Sprintf("arm %s: fill marked at %v ms; want once, at least fill_ms %d before the warm-up at %.0f", a.Name, fill, a.Timing.FillMS, want["warmup"]))
			}
			if len(drain) != 1 || drain[0] < ms(a.T.Add(w.after)) {
				problems = append(problems, fmt.Sprintf("arm %s: drain marked at %v ms; want once, after the load's end at %.0f", a.Name, drain, ms(a.T.Add(w.after))))
			} else if i+1 < len(arms) {
				if next := phases[arms[i+1].Name+" fill"]; len(next) == 1 && next[0] < drain[0]+float64(a.Timing.DrainMS) {
					problems = append(problems, fmt.Sprintf("arm %s: drain marked at %.0f ms, drain_ms %d, the next arm's fill at %.0f; want the fill after the drain", a.Name, drain[0], a.Timing.DrainMS, next[0]))
				}
			}
			at := a.T
			if n := len(a.Timeline); n > 0 {
				at = a.T.Add(time.Duration(a.Timeline[n-1].TMS)*time.Millisecond + result.RowWidth)
			}
			if a.Verdict == result.Recovered && a.RecoveryFromTMS != nil {
				at = a.T.Add(time.Duration(*a.RecoveryFromTMS) * time.Millisecond)
			}
			if v := verdicts[a.Name+" "+a.Verdict]; len(v) != 1 || math.Abs(v[0]-ms(at)) > 1 {
				problems = append(problems, fmt.Sprintf("arm %s: verdict %s marked at %v ms; want once, at %.0f (verdicts seen %v)", a.Name, a.Verdict, v, ms(at), verdicts))
			}
			loop := loopRatios(a.Loop)
			if len(loop) == 0 {
				problems = append(problems, fmt.Sprintf("arm %s: no loop in the results; want one to compare", a.Name))
			}
			for fig, r := range loop {
				if v := ratios[a.Name+" "+fig]; len(v) != 1 || v[0] != r {
					problems = append(problems, fmt.Sprintf("arm %s: loop ratio %s scraped %v; want the results' %v", a.Name, fig, v, r))
				}
			}
			for k := range ratios {
				if arm, fig, _ := strings.Cut(k, " "); arm == a.Name {
					if _, ok := loop[fig]; !ok {
						problems = append(problems, fmt.Sprintf("arm %s: loop ratio %s scraped; the results have none", a.Name, fig))
					}
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for check(); len(problems) > 0; check() {
		select {
		case <-ctx.Done():
			for _, p := range problems {
				t.Error(p)
			}
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// loopRatios are l's measured figures' ratios, by their names in the
// results (loop.NAME.ratio).
func loopRatios(l *result.Loop) map[string]float64 {
	out := map[string]float64{}
	if l == nil {
		return out
	}
	figs := map[string]*result.LoopFigure{"attempts_per_request": l.AttemptsPerRequest, "db_qps": l.DBQPS, "misses_rps": l.MissesRPS}
	for name, f := range l.Counts { // the subject's row counters, loop.NAME_rps
		figs[name+"_rps"] = f
	}
	for name, f := range figs {
		if f != nil {
			out[name] = f.Ratio
		}
	}
	return out
}
