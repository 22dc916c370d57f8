package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/herdbench/herdbench/experiment"
)

// progressLine shows where a run is. On a terminal it is one line,
// redrawn in place a few times a second, so the times tick also while a
// phase reports nothing (the fill): the arm, its phase and how long it has
// run, the requests and DB q/s live, and the run's elapsed and remaining
// time. Elsewhere (a file, CI) it writes a line as each arm starts.
type progressLine struct {
	w    io.Writer
	live bool

	mu      sync.Mutex
	last    experiment.Progress
	seen    bool
	lastArm int

	stop chan struct{}
	done chan struct{}
}

// redraw is how often the live line is drawn again.
const redraw = 200 * time.Millisecond

func newProgressLine(w io.Writer, live bool) *progressLine {
	l := &progressLine{w: w, live: live, stop: make(chan struct{}), done: make(chan struct{})}
	if !live {
		close(l.done)
		return l
	}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(redraw)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
				l.draw(time.Now())
			}
		}
	}()
	return l
}

// update takes the run's latest progress.
func (l *progressLine) update(p experiment.Progress) {
	l.mu.Lock()
	l.last, l.seen = p, true
	at := p.Run*(p.Arms+1) + p.Arm // a new arm, or the same again in the next round
	newArm := at != l.lastArm
	l.lastArm = at
	l.mu.Unlock()
	switch {
	case l.live:
		l.draw(time.Now())
	case newArm:
		fmt.Fprintf(l.w, "%s\n", armText(p))
	}
}

// armText is which arm p is at, and which round of a repeated run:
// "arm 2/3 lock (round 1/3)".
func armText(p experiment.Progress) string {
	s := fmt.Sprintf("arm %d/%d %s", p.Arm, p.Arms, p.Name)
	if p.Runs > 1 {
		s += fmt.Sprintf(" (round %d/%d)", p.Run, p.Runs)
	}
	return s
}

func (l *progressLine) draw(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen {
		return
	}
	fmt.Fprint(l.w, "\r\033[K"+progressText(l.last, now))
}

// progressText is the live line for p at now.
func progressText(p experiment.Progress, now time.Time) string {
	s := fmt.Sprintf("%s  %s %.1fs", armText(p), p.Phase, max(now.Sub(p.PhaseStarted), 0).Seconds())
	if p.Phase != experiment.PhaseFill {
		s += fmt.Sprintf("  %s requests  db %.0f q/s", thousands(p.Requests), p.DBQPS)
	}
	return s + fmt.Sprintf("  |  run %s, about %s left", clockTime(now.Sub(p.RunStarted)), clockTime(p.Ends.Sub(now)))
}

// clockTime is a duration as m:ss.
func clockTime(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// close stops the redrawing and clears the line.
func (l *progressLine) close() {
	if !l.live {
		return
	}
	close(l.stop)
	<-l.done
	fmt.Fprint(l.w, "\r\033[K")
}
