package reporters

import (
	"slices"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// The summary never names an arm that won by dropping requests: "fewest
// db queries" and "lowest p99" are chosen among the arms whose drop rate
// is within DropMargin of the run's lowest; the others are named apart,
// with what they dropped, whichever arm comes first.
func TestBestNeverRewardsDrops(t *testing.T) {
	arm := func(name string, drop float64, queries int64, p99 float64) result.ArmResult {
		return result.ArmResult{Name: name, DB: &result.DB{Queries: queries}, HTTP: result.HTTP{DropRate: drop, P99MS: p99}}
	}
	tests := []struct {
		name            string
		arms            []result.ArmResult
		fewest, fastest string
		dropped         []string
	}{
		{"no drops: the figures decide", []result.ArmResult{arm("none", 0, 400, 1000), arm("lock", 0, 100, 200)}, "lock", "lock", nil},
		{"within the margin", []result.ArmResult{arm("none", 0.002, 400, 1000), arm("shed", 0.011, 100, 50)}, "shed", "shed", nil},
		{"a failing arm is not rewarded", []result.ArmResult{arm("retries3", 0.001, 295, 60), arm("retries0", 0.168, 250, 20)}, "retries3", "retries3", []string{"retries0"}},
		{"the first arm dropped", []result.ArmResult{arm("none", 0.3, 50, 5), arm("lock", 0, 100, 200), arm("xfetch", 0.005, 300, 150)}, "lock", "xfetch", []string{"none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fewest, fastest, dropped, ok := best(&experiment.Report{Arms: tt.arms})
			var names []string
			for _, a := range dropped {
				names = append(names, a.Name)
			}
			if !ok || fewest.Name != tt.fewest || fastest.Name != tt.fastest || !slices.Equal(names, tt.dropped) {
				t.Errorf("best = (%s, %s, %v, %t); want (%s, %s, %v, true)", fewest.Name, fastest.Name, names, ok, tt.fewest, tt.fastest, tt.dropped)
			}
		})
	}
}
