package sweep

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every field of the results is in docs/sweep.md's contract table, and
// every path the table lists is a field: the contract cannot drift from
// the type. plan, environment and a run's result are the stampede's
// contract, documented in docs/reports.md, and stop there.
func TestEveryResultsFieldIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/sweep.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "## The results contract")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.\\[\\]]+)`(?:, `([a-z_.\\[\\]]+)`)?").FindAllStringSubmatch(table, -1) {
		for _, p := range m[1:] {
			if p != "" {
				documented[p] = true
			}
		}
	}
	var calls int
	ax := Axis{Name: "burst", From: 10, To: 100, Unit: Count}
	s := Sweep{Plan: pl("none"), Vary: &ax, Settings: settings(1), Run: threshold(40, &calls)}
	s.Settings.MaxRuns = 3 // stopped, so every optional field is set
	res, _ := s.Do(context.Background())
	res.Grid = []GridAxis{{Name: "rate", Values: []float64{1}, Unit: Count}}
	res.Error = "x"
	tip, off := 1.0, 0.1 // what package predict sets, every field
	res.Arms[0].Predicted = &Predicted{State: PredictedFound, Value: &tip, Unit: Count, Text: "1", VsMeasured: &off, Note: "x",
		Inputs: []Input{{Name: "rate", Value: 1, Unit: "req/s", Source: "plan.rate"}}}
	escape := 12.5 // what --escape sets on a stuck probe
	res.Arms[0].Probed[0].EscapeRPS, res.Arms[0].Probed[0].EscapeTried = &escape, 1
	gs, _ := ParseGates([]string{"tipping == none"}, &ax, []string{"none"})
	res.Gates = CheckGates(gs, res.Arms)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if prefix == "plan" || prefix == "environment" || strings.HasSuffix(prefix, ".result") {
			paths = append(paths, prefix)
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), c)
			}
		case []any:
			for _, c := range x {
				walk(prefix+"[]", c)
			}
		default: // a list of values is its field
			paths = append(paths, strings.TrimSuffix(prefix, "[]"))
		}
	}
	walk("", v)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	for _, p := range paths {
		if !documented[p] {
			t.Errorf("results field %s is not in docs/sweep.md's contract table", p)
		}
		delete(documented, p)
	}
	for p := range documented {
		t.Errorf("docs/sweep.md lists %s, which the results do not have", p)
	}
}
