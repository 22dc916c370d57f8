package main

import (
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
