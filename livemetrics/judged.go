package livemetrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// The arm's course and judgement: when each phase began, the verdict and
// when it holds from, the loop's ratios and the escape's steps, each set
// from what the run itself computes (experiment.PhaseObserver,
// JudgedObserver, EscapeObserver), never a figure the results lack.
var (
	familyPhase = Family{"herdbench_phase_timestamp_seconds", "gauge",
		"Unix time at which the arm's phase began, by arm and phase: fill, warmup (T - before - warmup), before (T - before), after (T on the schedule), drain; for dashboards to mark. None for a phase the arm skipped.",
		[]string{"arm", "phase"}}
	familyVerdict = Family{"herdbench_verdict_timestamp_seconds", "gauge",
		"Unix time the arm's verdict holds from, by arm and verdict (the results' verdict), set when the arm is judged at its end: T + recovery_from_t_ms when recovered, else the end of the arm's timeline; for dashboards to mark.",
		[]string{"arm", "verdict"}}
	familyLoop = Family{"herdbench_loop_ratio", "gauge",
		"A loop figure's rate after the trigger's end over its rate in the before window (the results' loop.FIGURE.ratio), by arm and figure, set when the arm is judged; none for a figure the target does not let herdbench observe.",
		[]string{"arm", "figure"}}
	familyEscapeStep = Family{"herdbench_escape_step_rps", "gauge",
		"The rate the arm's escape (--escape) stepped its load down to, in requests a second (the results' escape.steps[].rps), set as each step is scheduled, a few rows before it begins; none before the first step.",
		[]string{"arm"}}
	familyEscape = Family{"herdbench_escape_rps", "gauge",
		"The arm's escape load (--escape): the highest stepped rate, in requests a second, at which it came back (the results' escape.rps), set when the arm is judged; none when no step came back.",
		[]string{"arm"}}
)

// judgedMetrics are the arm's course and judgement's live series.
type judgedMetrics struct {
	phase, verdict, loop, escapeStep, escape *prometheus.GaugeVec
}

var (
	_ experiment.PhaseObserver  = (*Metrics)(nil)
	_ experiment.JudgedObserver = (*Metrics)(nil)
	_ experiment.EscapeObserver = (*Metrics)(nil)
)

func newJudgedMetrics() *judgedMetrics {
	return &judgedMetrics{phase: familyPhase.gauge(), verdict: familyVerdict.gauge(), loop: familyLoop.gauge(),
		escapeStep: familyEscapeStep.gauge(), escape: familyEscape.gauge()}
}

func (j *judgedMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{j.phase, j.verdict, j.loop, j.escapeStep, j.escape}
}

// Phase records when the arm's phase began; a fill begins a run of the
// arm, whose escape steps replace a previous run's (--repeat).
func (m *Metrics) Phase(arm, phase string, began time.Time) {
	if phase == experiment.PhaseFill {
		m.judged.escapeStep.DeletePartialMatch(prometheus.Labels{"arm": arm})
	}
	m.judged.phase.WithLabelValues(arm, phase).Set(unix(began))
}

// EscapeStep records the rate the arm's escape stepped down to.
func (m *Metrics) EscapeStep(arm string, _ int, rps float64, _ time.Time) {
	m.judged.escapeStep.WithLabelValues(arm).Set(rps)
}

// Judged records the arm's verdict, its loop's ratios and its escape
// load, replacing a previous run's of the same arm (--repeat): a verdict
// or figure that run had and this one has not is gone.
func (m *Metrics) Judged(arm string, res *result.ArmResult) {
	j := m.judged
	only := prometheus.Labels{"arm": arm}
	j.verdict.DeletePartialMatch(only)
	j.loop.DeletePartialMatch(only)
	j.escape.DeletePartialMatch(only)
	if res.Verdict != "" {
		j.verdict.WithLabelValues(arm, res.Verdict).Set(unix(VerdictAt(res)))
	}
	for path, v := range res.Figures() {
		if name, ok := strings.CutPrefix(path, "loop."); ok && v != nil && strings.HasSuffix(name, ".ratio") {
			j.loop.WithLabelValues(arm, strings.TrimSuffix(name, ".ratio")).Set(*v)
		}
	}
	if x := res.Escape; x != nil && x.RPS != nil {
		j.escape.WithLabelValues(arm).Set(*x.RPS)
	}
}

// VerdictAt is the instant res's verdict holds from, as
// herdbench_verdict_timestamp_seconds marks it: T + recovery_from_t_ms
// when recovered, else the end of its timeline's last row (T without one).
func VerdictAt(res *result.ArmResult) time.Time {
	if ms := res.RecoveryFromTMS; res.Verdict == result.Recovered && ms != nil {
		return res.T.Add(time.Duration(*ms) * time.Millisecond)
	}
	if n := len(res.Timeline); n > 0 {
		return res.T.Add(time.Duration(res.Timeline[n-1].TMS)*time.Millisecond + result.RowWidth)
	}
	return res.T
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
