package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/sweep"
)

func TestSweepProgressText(t *testing.T) {
	p := sweep.Progress{Arm: "lock", ArmIndex: 2, Arms: 3, At: "burst=120", Bracket: "[100, 150]", RunsDone: 9, RunsLeft: 12, ETA: 95 * time.Second}
	now := time.Unix(100, 0)
	run := experiment.Progress{Phase: "after", PhaseStarted: now.Add(-1500 * time.Millisecond)}
	want := "arm 2/3 lock  burst=120  bracket [100, 150]  runs 9 done, at most 12 left, about 1:35 left  |  after 1.5s"
	if got := sweepText(p, run, now); got != want {
		t.Errorf("sweepText = %q; want %q", got, want)
	}
	// quiet when not live: nothing is written
	var b bytes.Buffer
	l := newSweepLine(&b, false)
	l.sweep(p)
	l.run(run)
	l.close()
	if b.Len() != 0 {
		t.Errorf("a line not live wrote %q; want nothing", b.String())
	}
}
