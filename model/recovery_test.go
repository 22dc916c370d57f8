package model

import (
	"math"
	"testing"
	"time"
)

// recoveryCells are the retry storm's recoveries measured on the
// testbed, each run's recovery_ms (from the fault's end to the first
// 100 ms row of the verdict's hold back in band), beside the model's
// when written: the six cells of the map with --repeat 3
// (docs/metastability.md, "The capacity of the stuck state, and the
// map": 2026-11-29, 05:08 to 05:13 UTC, load average 11.8 to 18.6) and
// the cells measured on 2026-12-03 with --repeat 3 ("The model", 07:59
// to 08:11 UTC, load average 8 to 12). perAttempt is the database's
// queries an attempt before T (db.baseline_qps over
// windows.before.attempts_rps, the median of the cell's runs), around
// which the verdict's band is: the 2026-12-03 cells' own; of the map's,
// whose runs were not kept, the page's 0.86 at 300 req/s and the
// 2026-12-03 runs' at 100 and 200 req/s (0.93 to 0.95, 0.87 to 0.89;
// the cache's share depends on the rate, keys and TTL, which are the
// same). within: the model falls within 25% of a measured run of the
// cell (issue 52); the others are the misses "Where the model misses"
// explains.
var recoveryCells = []struct {
	rate       float64
	fault      time.Duration
	when       string
	perAttempt float64
	measured   []time.Duration
	model      time.Duration
	within     bool
}{
	{100, time.Second, "2026-11-29", 0.94, ms(90, 190), 100 * time.Millisecond, true},
	{100, 2 * time.Second, "2026-11-29", 0.94, ms(380, 390), 200 * time.Millisecond, false},
	{100, 4 * time.Second, "2026-11-29", 0.94, ms(2580, 2590), 2 * time.Second, true},
	{200, time.Second, "2026-11-29", 0.88, ms(290, 290), 300 * time.Millisecond, true},
	{200, 2 * time.Second, "2026-11-29", 0.88, ms(1670, 2580), 1100 * time.Millisecond, false},
	{300, time.Second, "2026-11-29", 0.86, ms(440, 460), 600 * time.Millisecond, false},
	{100, 2 * time.Second, "2026-12-03", 0.94, ms(482, 386, 496), 200 * time.Millisecond, false},
	{100, 4 * time.Second, "2026-12-03", 0.93, ms(2295, 2293, 2496), 2 * time.Second, true},
	{200, 2 * time.Second, "2026-12-03", 0.88, ms(1383, 1292, 1794), 1100 * time.Millisecond, true},
	{300, time.Second, "2026-12-03", 0.85, ms(389, 493, 492), 600 * time.Millisecond, true},
	{300, 1500 * time.Millisecond, "2026-12-03", 0.85, ms(1391, 1393, 1492), 1700 * time.Millisecond, true},
}

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

// TestRecoveryBesideTheMeasurements: each measured cell, its runs, the
// model's recovery and the tolerance, 25% of the nearest run. A cell
// the doc says the model reaches fails the test when the model falls
// outside it; a cell it says the model misses fails it when the model
// now reaches it (the doc is then stale); either fails it when the
// model's figure is not the doc's, or when the model tips.
func TestRecoveryBesideTheMeasurements(t *testing.T) {
	for _, c := range recoveryCells {
		f := slowdb
		f.Duration = c.fault
		o := DefaultOptions // the map's sweeps': 3 s before, 20 s after
		o.DBPerAttempt = c.perAttempt
		tips, back := Tips(testbed, storm(c.rate), f, o)
		if tips {
			t.Errorf("%v req/s × %v (%s): the model tips; measured back in %v", c.rate, c.fault, c.when, c.measured)
			continue
		}
		nearest := c.measured[0]
		for _, m := range c.measured[1:] {
			if (back - m).Abs() < (back - nearest).Abs() {
				nearest = m
			}
		}
		off := back.Seconds()/nearest.Seconds() - 1
		within := math.Abs(off) <= 0.25
		t.Logf("%v req/s × %v (%s): measured %v, predicted %v (%+.0f%% of %v), tolerance 25%%: within %v",
			c.rate, c.fault, c.when, c.measured, back, 100*off, nearest, within)
		switch {
		case within != c.within:
			t.Errorf("%v req/s × %v (%s): predicted %v, %+.0f%% of the measured %v (tolerance 25%%): within %v; docs/metastability.md says %v",
				c.rate, c.fault, c.when, back, 100*off, nearest, within, c.within)
		case (back - c.model).Abs() > Step/2:
			t.Errorf("%v req/s × %v (%s): predicted %v; docs/metastability.md's table says %v", c.rate, c.fault, c.when, back, c.model)
		}
	}
}
