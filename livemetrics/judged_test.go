package livemetrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/herdbench/herdbench/experiment/result"
)

// VerdictAt marks a recovered arm at its recovery, any other at the end of
// its timeline, and T when it has no rows.
func TestVerdictAt(t *testing.T) {
	T := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ms := func(v int64) *int64 { return &v }
	rows := []result.Row{{TMS: -100}, {TMS: 0}, {TMS: 2900}}
	tests := []struct {
		name string
		res  result.ArmResult
		want time.Duration // from T
	}{
		{"recovered", result.ArmResult{Verdict: result.Recovered, RecoveryFromTMS: ms(1200), Timeline: rows}, 1200 * time.Millisecond},
		{"metastable", result.ArmResult{Verdict: result.Metastable, Timeline: rows}, 3 * time.Second},
		{"recovered without a recovery", result.ArmResult{Verdict: result.Recovered, Timeline: rows}, 3 * time.Second},
		{"no rows", result.ArmResult{Verdict: result.Overloaded}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.res.T = T
			if got := VerdictAt(&tt.res).Sub(T); got != tt.want {
				t.Errorf("VerdictAt(%s) = T%+v; want T%+v", tt.name, got, tt.want)
			}
		})
	}
}

// Judged sets what the arm's results hold and nothing else: the loop's
// measured figures only, no escape load when none came back, and a
// repeated arm's last run alone.
func TestJudgedSetsOnlyWhatWasMeasured(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	T := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rps := 40.0
	m.Judged("none", &result.ArmResult{T: T, Verdict: result.Metastable, Timeline: []result.Row{{TMS: 0}},
		Loop:   &result.Loop{AttemptsPerRequest: &result.LoopFigure{Ratio: 2.5}, DBQPS: &result.LoopFigure{Ratio: 4}},
		Escape: &result.EscapeResult{RPS: &rps}})
	if got := testutil.ToFloat64(m.judged.loop.WithLabelValues("none", "db_qps")); got != 4 {
		t.Errorf("loop ratio db_qps = %v; want 4", got)
	}
	if got := testutil.ToFloat64(m.judged.escape.WithLabelValues("none")); got != 40 {
		t.Errorf("escape rps = %v; want 40", got)
	}
	// the arm again (--repeat): recovered, its cache unobserved, no escape
	ms := int64(700)
	m.Judged("none", &result.ArmResult{T: T, Verdict: result.Recovered, RecoveryFromTMS: &ms,
		Loop: &result.Loop{AttemptsPerRequest: &result.LoopFigure{Ratio: 1}}, Escape: &result.EscapeResult{}})
	if n := testutil.CollectAndCount(m.judged.verdict); n != 1 {
		t.Errorf("%d verdict series after a second run; want 1, the last run's", n)
	}
	if got := testutil.ToFloat64(m.judged.verdict.WithLabelValues("none", result.Recovered)); got != unix(T.Add(700*time.Millisecond)) {
		t.Errorf("verdict recovered at %v; want T+700ms", got)
	}
	if n := testutil.CollectAndCount(m.judged.loop); n != 1 {
		t.Errorf("%d loop series; want 1: attempts_per_request, the one figure measured", n)
	}
	if n := testutil.CollectAndCount(m.judged.escape); n != 0 {
		t.Errorf("%d escape series for an arm no step brought back; want none", n)
	}
}
