package load

import (
	"testing"
	"time"
)

// A sleeper releases no hit before it is due on the schedule's clock (the
// pacer once released some a few tens of nanoseconds early), and an
// interrupted one returns at once, now and after.
func TestSleeperReleasesNothingEarly(t *testing.T) {
	s := &sleeper{}
	s.open()
	defer s.close()
	const rate, hits = 10_000, 3_000
	start := time.Now()
	interval := time.Second / rate
	for h := range hits {
		due := start.Add(time.Duration(h+1) * interval)
		if !s.until(due) {
			t.Fatalf("hit %d: until = false; want true, nothing interrupted it", h)
		}
		if now := time.Now(); now.Before(due) {
			t.Fatalf("hit %d released %s before it was due", h, due.Sub(now))
		}
	}
	s.interrupt()
	for range 2 {
		if s.until(time.Now().Add(time.Hour)) {
			t.Fatal("an interrupted sleeper slept; want it to return false at once")
		}
	}
}
