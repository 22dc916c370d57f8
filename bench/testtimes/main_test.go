package main

import (
	"math"
	"strings"
	"testing"
)

// The budgets fail the check that keeps them: a suite or a package over
// its budget is named, and one within it is not.
func TestBudgetsNameWhatIsOver(t *testing.T) {
	in := strings.NewReader(`{"Time":"2026-01-01T00:00:00Z","Action":"start","Package":"github.com/herdbench/herdbench/a"}
{"Time":"2026-01-01T00:03:00Z","Action":"pass","Package":"github.com/herdbench/herdbench/a"}
{"Time":"2026-01-01T00:01:00Z","Action":"start","Package":"github.com/herdbench/herdbench/b"}
{"Time":"2026-01-01T00:06:00Z","Action":"pass","Package":"github.com/herdbench/herdbench/b"}
`)
	pkgs, _, err := read(in)
	if err != nil {
		t.Fatal(err)
	}
	over := overBudget(pkgs, 5*60e9, 4*60e9)
	want := []string{"the suite: 360 s, its budget 300 s", "b: 300 s, a package's budget 240 s"}
	if strings.Join(over, "|") != strings.Join(want, "|") {
		t.Errorf("over = %q; want %q", over, want)
	}
	if over := overBudget(pkgs, 10*60e9, 5*60e9); len(over) != 0 {
		t.Errorf("within budget: over = %q; want none", over)
	}
}

// A sharer's wait for a seat is a wait, and what it held is its seat: the
// shared lock's hold includes the seat's wait (86 s of 101 s once, beside
// a whole suite). A log from before the seats keeps the shared lock's.
func TestASeatsWaitIsAWait(t *testing.T) {
	in := strings.NewReader(`{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestA","Output":"    x_test.go:28: sharelock: waited 2.0s\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestA","Output":"    x_test.go:28: seat: waited 85.9s\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestA","Output":"    machinelock.go:179: seat: held 14.7s\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestA","Output":"    machinelock.go:179: sharelock: held 100.6s\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"pass","Package":"p","Test":"TestA","Elapsed":103.9}
{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestB","Output":"    x_test.go:9: sharelock: waited 1.0s\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestB","Output":"    machinelock.go:179: sharelock: held 30.0s\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"pass","Package":"p","Test":"TestB","Elapsed":31.5}
`)
	_, tests, err := read(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		waited, held float64
	}{{"TestA", 87.9, 14.7}, {"TestB", 1, 30}} {
		got := tests["p "+c.name]
		if got == nil || !got.locked || got.alone || math.Abs(got.waited-c.waited) > 1e-9 || got.held != c.held {
			t.Errorf("%s: %+v; want waited %g s, held %g s shared", c.name, got, c.waited, c.held)
		}
	}
}
