package experiment

import (
	"time"

	"github.com/herdbench/herdbench/experiment/result"
)

// Progress is where a run is, for a progress line: the arm and its phase
// with when each began, so a line can show them ticking between calls,
// the live figures, and when the run should end.
type Progress struct {
	Arm, Arms    int // 1-based
	Name         string
	Run, Runs    int    // with --repeat: the round, 1-based, of how many; else 0
	Phase        string // fill, warmup, before, after, drain
	PhaseStarted time.Time
	RunStarted   time.Time
	// Ends is when the run should end: the load windows left, and the
	// fills and drains left at what the finished arms' took (a first
	// guess before any has)
	Ends     time.Time
	DBQPS    float64
	Requests int64
}

// The phases of an arm, as Progress names them.
const (
	PhaseFill  = "fill"  // bringing the service to the arm's start
	PhaseDrain = "drain" // waiting for the service to finish the arm's work
)

// clock keeps a run's start and what its arms' overhead has been, to
// estimate its end.
type clock struct {
	started  time.Time
	fill     time.Duration // an arm's fill, on average so far
	drain    time.Duration
	finished int
}

// firstGuess is an arm's fill and drain before any arm has run: about what
// the default stampede's take on two cores.
const firstGuess = 800 * time.Millisecond

func newClock() *clock {
	return &clock{started: time.Now(), fill: firstGuess, drain: firstGuess / 4}
}

// done folds a finished arm's timing into the averages.
func (c *clock) done(t result.Timing) {
	n := time.Duration(c.finished)
	c.fill = (c.fill*n + time.Duration(t.FillMS)*time.Millisecond) / (n + 1)
	c.drain = (c.drain*n + time.Duration(t.DrainMS)*time.Millisecond) / (n + 1)
	c.finished++
}

// ends is when the run should end, from where arm idx (0-based) of arms
// is: phase begun at since, the load of length load begun at loadStart.
func (c *clock) ends(now time.Time, idx, arms int, phase string, since, loadStart time.Time, load time.Duration) time.Time {
	var left time.Duration
	switch phase {
	case PhaseFill:
		left = max(c.fill-now.Sub(since), 0) + load + c.drain
	case PhaseDrain:
		left = max(c.drain-now.Sub(since), 0)
	default:
		left = max(loadStart.Add(load).Sub(now), 0) + c.drain
	}
	left += time.Duration(arms-idx-1) * (c.fill + load + c.drain)
	return now.Add(left)
}
