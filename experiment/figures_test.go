package experiment

import (
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/triggers"
)

// An arm's typed figures are exactly the numbers of its results' JSON, as
// gates read a results file: the same paths, the same values, null where
// the JSON has null.
func TestFiguresAreTheResultsNumbers(t *testing.T) {
	for name, runs := range aggregateFixtures(t) {
		agg, err := result.Aggregate(runs)
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
		for _, f := range result.FiguresOf(&runs[0]) {
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
	vocabulary, _ := filepath.Glob("../figure/*.go") // the figures' declarations' vocabulary
	for _, name := range append(files, vocabulary...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"reflect"` {
				t.Errorf("%s imports reflect (accepted: a figure declared in figure_table.go or beside its type; no reflection in the engine)", name)
			}
		}
	}
}

// A figure is declared in one place: one line in armFigures (here a
// throwaway one, over a number no figure holds) reaches a gate, a
// repeat's median and spread, the paths a gate may name and the
// contract's list, which then wants a row for it.
func TestAFigureIsDeclaredInOnePlace(t *testing.T) {
	was := result.ArmFigures
	t.Cleanup(func() { result.ArmFigures = was })
	result.ArmFigures = append(slices.Clone(was), figure.MillisOf("throwaway_ms", func(a *result.ArmResult) *float64 { return &a.BaselineP99 }))

	runs := []result.ArmResult{{Name: "a"}, {Name: "a"}, {Name: "a"}}
	for i, ms := range []float64{10, 30, 20} {
		runs[i].BaselineP99 = ms
	}
	agg, err := result.Aggregate(runs)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := agg.SpreadOf("throwaway_ms"); !ok || agg.BaselineP99 != 20 || *s.Min != 10 || *s.Max != 30 {
		t.Errorf("Aggregate: throwaway_ms = %v, spread %+v; want the median 20, from 10 to 30", agg.BaselineP99, s)
	}
	g, err := gates.Parse("throwaway_ms < 25")
	if err != nil {
		t.Fatal(err)
	}
	if res := result.CheckGates([]gates.Gate{g}, []result.ArmResult{agg}); len(res) != 1 || res[0].Measured == nil || *res[0].Measured != 20 || !res[0].Pass {
		t.Errorf("CheckGates(throwaway_ms < 25) = %+v; want it measured 20, and passed", res)
	}
	if !slices.Contains(result.GatePaths(), "throwaway_ms") {
		t.Errorf("GatePaths() lacks throwaway_ms")
	}
	if missing := uncontracted(); !slices.Equal(missing, []string{"throwaway_ms"}) {
		t.Errorf("figures the contract has no row for: %q; want throwaway_ms", missing)
	}
}

// The declared kinds and units agree with the figures' names and with the
// gates' rules: a path gates.IsRatio reads as 0 to 1 is a Ratio, one in
// _ms a Duration in ms, _us in us, _rps or _qps a Rate a second.
func TestFigureKindsAgreeWithTheirNames(t *testing.T) {
	c := &figure.Collector{Schema: true, Names: true}
	for _, tr := range triggers.Default().Triggers() {
		result.ArmFigures.Walk(&result.ArmResult{Trigger: result.TriggerResult{Detail: tr.Detail()}}, "", c)
	}
	for _, f := range c.Out {
		kind, unit := f.Kind, f.Unit
		switch {
		case gates.IsRatio(f.Path) && kind != figure.Ratio:
			t.Errorf("%s: kind %s; gates read it as a ratio", f.Path, kind)
		case strings.HasSuffix(f.Path, "_ms") && (kind != figure.Duration || unit != "ms"),
			strings.HasSuffix(f.Path, "_us") && (kind != figure.Duration || unit != "us"),
			(strings.HasSuffix(f.Path, "_rps") || strings.HasSuffix(f.Path, "_qps")) && (kind != figure.Rate || unit != "/s"):
			t.Errorf("%s: kind %s, unit %q; its name says otherwise", f.Path, kind, unit)
		}
	}
}

// Every trigger's detail, each of its fields set, has the figures its
// JSON prints: a field added to a detail type without its line in
// its trigger file fails here, named.
func TestEveryTriggersDetailIsDeclared(t *testing.T) {
	for _, tr := range triggers.Default().Triggers() {
		d := tr.Detail()
		fill(reflect.ValueOf(d).Elem(), "trigger.detail", 1)
		a := result.ArmResult{Trigger: result.TriggerResult{Name: tr.Name(), Detail: d}}
		want, err := gates.Numbers(a)
		if err != nil {
			t.Fatal(err)
		}
		if diff := numbersDiff(a.Figures(), want); diff != "" {
			t.Errorf("trigger %s: %s", tr.Name(), diff)
		}
	}
}
