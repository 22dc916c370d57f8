package reporters

import (
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// The table's per-server column gives each server's return beside its
// busiest second: a step's full share at once, a ramp's later, and one
// whose full share the arm did not reach, back again twice after it.
func TestLBTableShowsEachServersReturn(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	lb := &result.LoadBalancer{Servers: result.LBServers{
		"a": {Attempts: 400, PeakRPS: 147, Return: &result.LBReturn{BackMS: 1200, FirstSecondRPS: 93, Share: 0.5, FullShareMS: ms(0)}},
		"b": {Attempts: 300, PeakRPS: 145, Return: &result.LBReturn{BackMS: 1300, FirstSecondRPS: 11, Share: 0.5, FullShareMS: ms(3300)}},
		"c": {Attempts: 200, PeakRPS: 20, Return: &result.LBReturn{BackMS: 4100, FirstSecondRPS: 8, Share: 0.5},
			Returns: []result.LBReturn{{BackMS: 4100}, {BackMS: 5200}, {BackMS: 6300}}},
		"d": {Attempts: 100, PeakRPS: 100},
	}}
	_, rows := lbTable(&experiment.Report{Arms: []result.ArmResult{{Name: "x", LB: lb}}})
	if len(rows) != 1 {
		t.Fatalf("lbTable = %d rows; want 1", len(rows))
	}
	got := rows[0][len(rows[0])-1]
	want := "a 400 (peak 147/s; back at 1200 ms, 93/s its first second, full share +0 ms), " +
		"b 300 (peak 145/s; back at 1300 ms, 11/s its first second, full share +3300 ms), " +
		"c 200 (peak 20/s; back at 4100 ms, 8/s its first second, full share not reached; back again at 5200, 6300 ms), d 100 (peak 100/s)"
	if got != want {
		t.Errorf("per server = %q;\nwant %q", got, want)
	}
}
