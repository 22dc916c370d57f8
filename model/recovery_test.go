package model

import (
	"math"
	"testing"
	"time"
)

// mapOptions are the map's sweeps' (DefaultOptions: 3 s before, 20 s
// after) with the database's queries an attempt the retry storm
// measured before T: 0.86 (docs/metastability.md, "The capacity of the
// stuck state, and the map": 257 q/s at 300 req/s; 256 q/s at 300 req/s
// on 2026-12-03, below), around which the verdict's band is.
var mapOptions = func() Options {
	o := DefaultOptions
	o.DBPerAttempt = 0.86
	return o
}()

// recoveryCells are the retry storm's recoveries measured on the
// testbed, each run's recovery_ms (from the fault's end to the first
// 100 ms row of the verdict's hold back in band), beside the model's
// when written: the six cells of the map with --repeat 3
// (docs/metastability.md, "The capacity of the stuck state, and the
// map", 2026-11-29, 05:08 to 05:13 UTC) and the cell measured on
// 2026-12-03 ("The model": 300 req/s × 1.5 s, 07:59 UTC). within: the
// model falls within 25% of a measured run (issue 52); the others are
// the misses "Where the model misses" explains.
var recoveryCells = []struct {
	rate     float64
	fault    time.Duration
	measured []time.Duration
	model    time.Duration
	within   bool
}{
	{100, time.Second, ms(90, 190), 100 * time.Millisecond, true},
	{100, 2 * time.Second, ms(380, 390), 300 * time.Millisecond, true},
	{100, 4 * time.Second, ms(2580, 2590), 2 * time.Second, true},
	{200, time.Second, ms(290, 290), 300 * time.Millisecond, true},
	{200, 2 * time.Second, ms(1670, 2580), 1200 * time.Millisecond, false},
	{300, time.Second, ms(440, 460), 600 * time.Millisecond, false},
	{300, 1500 * time.Millisecond, ms(1391, 1393, 1492), 1700 * time.Millisecond, true},
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
		tips, back := Tips(testbed, storm(c.rate), f, mapOptions)
		if tips {
			t.Errorf("%v req/s × %v: the model tips; measured back in %v", c.rate, c.fault, c.measured)
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
		t.Logf("%v req/s × %v: measured %v, predicted %v (%+.0f%% of %v), tolerance 25%%: within %v",
			c.rate, c.fault, c.measured, back, 100*off, nearest, within)
		switch {
		case within != c.within:
			t.Errorf("%v req/s × %v: predicted %v, %+.0f%% of the measured %v (tolerance 25%%): within %v; docs/metastability.md says %v",
				c.rate, c.fault, back, 100*off, nearest, within, c.within)
		case (back - c.model).Abs() > Step/2:
			t.Errorf("%v req/s × %v: predicted %v; docs/metastability.md's table says %v", c.rate, c.fault, back, c.model)
		}
	}
}
