package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/sweep"
)

// sweepLine shows where a sweep is, on a terminal only (quiet in a file
// and in CI): the arm, the probe's magnitude, the bracket so far, runs
// done and left at most, an ETA, and the phase of the run going on. It is
// drawn again as the run reports its progress, a few times a second.
type sweepLine struct {
	w    io.Writer
	live bool

	mu    sync.Mutex
	last  sweep.Progress
	phase experiment.Progress
	seen  bool
}

func newSweepLine(w io.Writer, live bool) *sweepLine { return &sweepLine{w: w, live: live} }

// sweep takes the sweep's progress, before each run.
func (l *sweepLine) sweep(p sweep.Progress) {
	l.mu.Lock()
	l.last, l.seen, l.phase = p, true, experiment.Progress{}
	l.mu.Unlock()
	l.draw()
}

// run takes the running experiment's progress.
func (l *sweepLine) run(p experiment.Progress) {
	l.mu.Lock()
	l.phase = p
	l.mu.Unlock()
	l.draw()
}

func (l *sweepLine) draw() {
	if !l.live {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen {
		fmt.Fprint(l.w, "\r\033[K"+sweepText(l.last, l.phase, time.Now()))
	}
}

// sweepText is the line for p, the run in its phase at now.
func sweepText(p sweep.Progress, run experiment.Progress, now time.Time) string {
	s := fmt.Sprintf("arm %d/%d %s  %s  bracket %s  runs %d done, at most %d left", p.ArmIndex, p.Arms, p.Arm, p.At, p.Bracket, p.RunsDone, p.RunsLeft)
	if p.ETA > 0 {
		s += ", about " + clockTime(p.ETA) + " left"
	}
	if run.Phase != "" {
		s += fmt.Sprintf("  |  %s %.1fs", run.Phase, max(now.Sub(run.PhaseStarted), 0).Seconds())
	}
	return s
}

// close clears the line.
func (l *sweepLine) close() {
	if l.live {
		fmt.Fprint(l.w, "\r\033[K")
	}
}
