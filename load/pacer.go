package load

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// anchored is vegeta's constant pacer on a schedule that starts at start
// rather than when vegeta's attack began, a moment later: hit k is due at
// start + (k+1) intervals, the instant herdbench records as its intended
// send time.
//
// It also keeps that schedule more tightly than vegeta's time.Sleep can:
// the Go runtime wakes a goroutine sleeping less than a millisecond only
// when its poller's millisecond timeout ends, so at 1,000 req/s vegeta's
// hits left about half a millisecond late (measured here: a 300µs sleep
// overshoots by 820µs). Pace waits itself on a kernel timer (waker) set
// early by a low quantile of the timer's lateness (early), so that most
// wakes land just after the hit is due and send it at once; the few that
// land before it spin the rest. A busy-wait on every hit (an earlier
// version set the timer early by the mean lateness and spun up to 25µs)
// kept the median lag a few tens of microseconds lower but took 30 to 60%
// of the generator's CPU samples in profiles on a 2-core VM. vegeta calls
// Pace from its one loop goroutine; the wait is counted on start's clock
// itself, so no hit leaves before its instant, not even by the
// nanoseconds between vegeta's reading of its clock and Pace's.
type anchored struct {
	vegeta.ConstantPacer
	start time.Time
	du    time.Duration // the schedule's length: no hit is due after start + du
	wake  *waker
	cut   *Cut          // may end the schedule before du; nil: never
	early time.Duration // how early the timer is set: about the earlyQuantile of its lateness
}

// maxSpin is the most the pacer busy-waits for a hit: closer to it than
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

// Pace waits until hit number hits is due on start's clock, and says to
// send it now; with the attack over (stop) or the hit already late, it
// returns at once.
func (a *anchored) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	interval := a.Per / time.Duration(a.Freq)
	at := time.Duration(hits+1) * interval
	if at > a.du {
		return 0, true // vegeta's own clock, a moment late, would send one more
	}
	due := a.start.Add(at)
	if a.cut.after(due) {
		return 0, true
	}
	if !time.Now().Before(due) {
		return 0, false
	}
	for left := time.Until(due); left > 0; left = time.Until(due) {
		if left <= min(maxSpin, a.early) {
			continue // spin: the timer would wake later than this
		}
		// a timer of 0 never fires: at least a microsecond
		set := max(left-a.early, time.Microsecond)
		woke := time.Now().Add(set)
		a.wake.sleep(set)
		if time.Since(woke) > a.early {
			a.early = min(a.early+time.Duration(earlyQuantile*float64(earlyStep)), maxEarly)
		} else {
			a.early = max(a.early-time.Duration((1-earlyQuantile)*float64(earlyStep)), 0)
		}
	}
	// cut while it waited: a cut is set at its own now, so a hit due by
	// now that passed this check is never after it
	return 0, a.cut.after(due)
}
