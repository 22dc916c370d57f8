package load

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The pacer, called as vegeta's attack loop calls it, releases no hit
// before it is due on the schedule's clock (it once released some a few
// tens of nanoseconds early, off by the gap between vegeta's reading of its
// clock and its own), and stops after the schedule's last hit.
func TestPacerReleasesNothingEarly(t *testing.T) {
	wake, err := newWaker()
	if err != nil {
		t.Fatal(err)
	}
	defer wake.Close()
	const rate, hits = 10_000, 3_000
	start := time.Now()
	interval := time.Second / rate
	p := &anchored{ConstantPacer: vegeta.ConstantPacer{Freq: rate, Per: time.Second}, start: start,
		du: time.Duration(hits) * interval, wake: wake}
	began := time.Now() // vegeta's clock starts a moment after the schedule's
	for h := range uint64(hits) {
		due := start.Add(time.Duration(h+1) * interval)
		wait, stop := p.Pace(time.Since(began), h)
		if stop || wait > 0 {
			t.Fatalf("hit %d: Pace = %s, %v; want it released (0, false) within the schedule", h, wait, stop)
		}
		if now := time.Now(); now.Before(due) {
			t.Fatalf("hit %d released %s before it was due", h, due.Sub(now))
		}
	}
	if _, stop := p.Pace(time.Since(began), hits); !stop {
		t.Errorf("hit %d, past the schedule's %d: not stopped", hits, hits)
	}
}
