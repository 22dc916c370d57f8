package load

import (
	"testing"
	"time"
)

// The schedule is vegeta's pacer for one stripe of the single schedule: it
// waits until hit j's instant, start + (j*stripes+stripe+1) intervals, on
// its own clock, and stops past the window, at the cut or the halt, and
// when the generator is still behind LateGrace after the window.
func TestSchedulePace(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(d time.Duration) func() time.Time { return func() time.Time { return start.Add(d) } }
	ms := time.Millisecond
	cut := &Cut{}
	cut.At(start.Add(500 * ms))
	tests := []struct {
		name     string
		c        Config
		now      time.Duration
		hits     uint64
		wait     time.Duration
		stop     bool
		halt     time.Duration // 0: not halted
		cutAfter bool
	}{
		{name: "first hit", c: Config{Rate: 100, Duration: time.Second}, hits: 0, wait: 10 * ms},
		{name: "on time", c: Config{Rate: 100, Duration: time.Second}, now: 35 * ms, hits: 3, wait: 5 * ms},
		{name: "late: at once", c: Config{Rate: 100, Duration: time.Second}, now: 80 * ms, hits: 3, wait: -40 * ms},
		{name: "last of the window", c: Config{Rate: 100, Duration: time.Second}, now: 990 * ms, hits: 99, wait: 10 * ms},
		{name: "past the window", c: Config{Rate: 100, Duration: time.Second}, now: 990 * ms, hits: 100, stop: true},
		{name: "stripe 1 of 3", c: Config{Rate: 100, Duration: time.Second, Stripe: 1, Stripes: 3}, hits: 2, wait: 80 * ms},
		{name: "stripe past the window", c: Config{Rate: 100, Duration: time.Second, Stripe: 1, Stripes: 3}, hits: 33, stop: true},
		{name: "behind past the grace", c: Config{Rate: 100, Duration: time.Second}, now: time.Second + LateGrace + ms, hits: 50, stop: true},
		{name: "behind within the grace", c: Config{Rate: 100, Duration: time.Second}, now: time.Second + LateGrace - ms, hits: 50, wait: -(LateGrace + 489*ms)},
		{name: "before the cut", c: Config{Rate: 100, Duration: time.Second, Cut: cut}, now: 400 * ms, hits: 49, wait: 100 * ms},
		{name: "after the cut", c: Config{Rate: 100, Duration: time.Second, Cut: cut}, now: 400 * ms, hits: 50, stop: true, cutAfter: true},
		{name: "after the halt", c: Config{Rate: 100, Duration: time.Second}, now: 100 * ms, hits: 20, stop: true, halt: 200 * ms, cutAfter: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(tt.c, start)
			s.now = at(tt.now)
			if tt.halt > 0 {
				s.halt.At(start.Add(tt.halt))
			}
			wait, stop := s.Pace(0, tt.hits)
			if stop != tt.stop || (!stop && wait != tt.wait) {
				t.Errorf("Pace(%d) at %s = (%s, %t); want (%s, %t)", tt.hits, tt.now, wait, stop, tt.wait, tt.stop)
			}
			if got := s.cutBefore(s.due(s.global(tt.hits))); got != tt.cutAfter {
				t.Errorf("cutBefore(hit %d) = %t; want %t", tt.hits, got, tt.cutAfter)
			}
		})
	}
}

// A stripe's rate is its share of the schedule's.
func TestScheduleRate(t *testing.T) {
	s := newSchedule(Config{Rate: 300, Stripes: 3}, time.Now())
	if got := s.Rate(0); got != 100 {
		t.Errorf("Rate = %g; want 100", got)
	}
}
