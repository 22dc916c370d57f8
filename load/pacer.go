package load

import "time"

// sleeper is how a worker waits for its hit's instant on the schedule
// (start + (k+1) intervals, vegeta's constant pacer anchored on the
// schedule's start), more tightly than time.Sleep can: the Go runtime wakes
// a goroutine sleeping less than a millisecond only when its poller's
// millisecond timeout ends, so at 1,000 req/s vegeta's hits left about half
// a millisecond late (measured here: a 300µs sleep overshoots by 820µs).
// It waits on a kernel timer of its own (waker) set early by a low quantile
// of the timer's lateness (early), so that most wakes land just after the
// hit is due and send it at once; the few that land before it spin the
// rest. A busy-wait on every hit (an earlier version set the timer early by
// the mean lateness and spun up to 25µs) kept the median lag a few tens of
// microseconds lower but took 30 to 60% of the generator's CPU samples in
// profiles on a 2-core VM. The wait is counted on the schedule's clock
// itself, so no hit leaves before its instant.
type sleeper struct {
	wake   *waker        // nil until the worker first sleeps; nil after a failed open
	opened bool          // open was called
	early  time.Duration // how early the timer is set: about the earlyQuantile of its lateness
}

// maxSpin is the most a sleeper busy-waits for a hit: closer to it than
// the kernel's timer keeps time, it spins; farther, it sleeps again.
const maxSpin = 25 * time.Microsecond

// maxEarly bounds how early the timer is set to make up for its lateness.
const maxEarly = 100 * time.Microsecond

// earlyQuantile is the share of wakes that land before the hit is due (and
// spin), and earlyStep how fast early follows the timer's lateness: it
// grows by earlyQuantile steps after a wake later than it and shrinks by
// the rest after one earlier, so it settles where that share of wakes are
// earlier.
const (
	earlyQuantile = 0.1
	earlyStep     = 10 * time.Microsecond
)

// open makes the sleeper's timer; without one (out of files), it sleeps on
// the runtime's timers.
func (s *sleeper) open() {
	s.opened = true
	if w, err := newWaker(); err == nil {
		s.wake = w
	}
}

// until waits until due, and says whether it got there: false when it was
// interrupted first.
func (s *sleeper) until(due time.Time) bool {
	if s.wake == nil {
		time.Sleep(time.Until(due))
		return true
	}
	for left := time.Until(due); left > 0; left = time.Until(due) {
		if left <= min(maxSpin, s.early) {
			continue // spin: the timer would wake later than this
		}
		// a timer of 0 never fires: at least a microsecond
		set := max(left-s.early, time.Microsecond)
		woke := time.Now().Add(set)
		if !s.wake.sleep(set) {
			return false
		}
		if time.Since(woke) > s.early {
			s.early = min(s.early+time.Duration(earlyQuantile*float64(earlyStep)), maxEarly)
		} else {
			s.early = max(s.early-time.Duration((1-earlyQuantile)*float64(earlyStep)), 0)
		}
	}
	return true
}

// interrupt ends the sleeper's wait, and every later one, at once.
func (s *sleeper) interrupt() {
	if s.wake != nil {
		s.wake.interrupt()
	}
}

func (s *sleeper) close() {
	if s.wake != nil {
		s.wake.Close()
	}
}
