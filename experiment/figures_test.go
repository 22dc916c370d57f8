package experiment

import (
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/gates"
)

// An arm's typed figures are exactly the numbers of its results' JSON, as
// gates read a results file: the same paths, the same values, null where
// the JSON has null.
func TestFiguresAreTheResultsNumbers(t *testing.T) {
	for name, runs := range aggregateFixtures(t) {
		agg, err := Aggregate(runs)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range append(runs, agg) {
			want, err := gates.Numbers(a)
			if err != nil {
				t.Fatal(err)
			}
			got := a.Figures()
			if d := numbersDiff(got, want); d != "" {
				t.Errorf("%s[%d].Figures() differs from gates.Numbers: %s", name, i, d)
			}
		}
	}
}

// numbersDiff says how got and want differ, or "".
func numbersDiff(got, want map[string]*float64) string {
	for _, p := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[p]
		if !ok {
			return fmt.Sprintf("%s = %s missing", p, fmtNum(want[p]))
		}
		if fmtNum(g) != fmtNum(want[p]) {
			return fmt.Sprintf("%s = %s; want %s", p, fmtNum(g), fmtNum(want[p]))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			return fmt.Sprintf("%s = %s; want none", p, fmtNum(got[p]))
		}
	}
	return ""
}

// Setting a figure writes it where the results read it, and nowhere else.
func TestFigureSetWritesItsPath(t *testing.T) {
	for name, runs := range aggregateFixtures(t) {
		for _, f := range figuresOf(&runs[0]) {
			before := runs[0].Figures()
			var x *float64 // a null stays null: it may be an object's
			if f.Value() != nil {
				x = num(*f.Value() + 1)
			}
			f.Set(x)
			after, _ := gates.Numbers(runs[0])
			before[f.Path] = x
			if d := numbersDiff(after, before); d != "" {
				t.Errorf("%s: Set(%s, %s): %s", name, f.Path, fmtNum(x), d)
			}
		}
	}
}

// The engine finds and copies an arm's figures by their declaration, not
// by reflection: no file of the package but its tests imports reflect.
func TestTheEngineImportsNoReflect(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"reflect"` {
				t.Errorf("%s imports reflect (accepted: a figure declared in figure_table.go; no reflection in the engine)", name)
			}
		}
	}
}
