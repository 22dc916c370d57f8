package load

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// schedule is the vegeta Pacer of one attack: hit j of this stripe is the
// schedule's request k = j*Stripes + Stripe, due at start + (k+1)
// intervals, as vegeta's ConstantPacer has the whole schedule's hits, so
// the stripes of several generators together are the single schedule
// (k6's execution segments). It reads its own clock against the
// schedule's start rather than vegeta's elapsed time, because the start
// is the caller's (the instant T falls on), not the moment vegeta's
// attack began.
//
// It stops the attack, and says it did: when the next hit would be due
// past the duration, the cut, or the halt (ctx ended); and when the
// generator is still behind LateGrace after the window, so what it owes
// past the grace is counted Unsent, never sent late.
type schedule struct {
	start    time.Time
	rate     int
	interval time.Duration
	duration time.Duration
	stripe   uint64
	stripes  uint64
	last     time.Time // no hit leaves after it: the window and LateGrace
	cut      *Cut      // the caller's; nil never cuts
	steps    *Steps    // the caller's; nil never steps
	halt     Cut       // the attack's own: ctx ended at it
	now      func() time.Time
}

var _ vegeta.Pacer = (*schedule)(nil)

func newSchedule(c Config, start time.Time) *schedule {
	return &schedule{start: start, rate: c.Rate, interval: time.Second / time.Duration(c.Rate), duration: c.Duration,
		stripe: uint64(c.Stripe), stripes: uint64(max(c.Stripes, 1)), last: start.Add(c.Duration + LateGrace),
		cut: c.Cut, steps: c.Steps, now: time.Now}
}

// global is the schedule's number of this stripe's j-th hit.
func (s *schedule) global(j uint64) uint64 { return j*s.stripes + s.stripe }

// due is when the schedule has request k: start + (k+1) intervals, or as
// its steps have it once stepped.
func (s *schedule) due(k uint64) time.Time {
	if s.steps == nil {
		return s.start.Add(time.Duration(k+1) * s.interval)
	}
	return s.steps.due(s.start, s.interval, k)
}

// Pace is how long vegeta waits before hit number hits, or stop.
func (s *schedule) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	due := s.due(s.global(hits))
	now := s.now()
	switch {
	case due.Sub(s.start) > s.duration, s.cutBefore(due), now.After(s.last):
		return 0, true
	}
	return due.Sub(now), false
}

// Rate is the stripe's share of the schedule's rate at elapsed from its
// start (stepped down when its steps say so).
func (s *schedule) Rate(elapsed time.Duration) float64 {
	return s.steps.rateAt(float64(s.rate), s.start.Add(elapsed)) / float64(s.stripes)
}

// cutBefore says whether due falls after the cut or the halt: a hit due
// then is not owed, and is neither sent nor counted.
func (s *schedule) cutBefore(due time.Time) bool { return s.cut.after(due) || s.halt.after(due) }

// owed says whether hit j was owed to the service: due within the window,
// and before the cut and the halt.
func (s *schedule) owed(j uint64) bool {
	due := s.due(s.global(j))
	return due.Sub(s.start) <= s.duration && !s.cutBefore(due)
}
