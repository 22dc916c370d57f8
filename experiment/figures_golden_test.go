package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
)

// figuresGolden is every figure found on the results under testdata and
// reporters/testdata: its path, whether it is
// whole (a median of it rounds half up) and its value or null; then the
// paths a gate may name. It was written by the reflection walker the
// declared figures replaced (figures.go before issue 49), and a
// declaration that finds another figure, value, null or rounding fails
// here.
const figuresGolden = "testdata/figures.golden"

func TestFiguresAreTheWalkersFigures(t *testing.T) {
	var b bytes.Buffer
	for _, s := range figureSets(t) {
		for _, f := range result.FiguresOf(s.arm) {
			v := "null"
			if x := f.Value(); x != nil {
				v = strconv.FormatFloat(*x, 'g', -1, 64)
			}
			fmt.Fprintf(&b, "%s %s whole=%t %s\n", s.name, f.Path, f.Whole, v)
		}
	}
	fmt.Fprintf(&b, "gate paths: %s\n", strings.Join(result.GatePaths(), " "))
	fmt.Fprintf(&b, "class paths: %s\n", strings.Join(result.ClassFigurePaths, " "))
	fmt.Fprintf(&b, "lb server paths: %s\n", strings.Join(result.LBServerFigures, " "))
	if *update {
		if err := os.WriteFile(figuresGolden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(figuresGolden)
	if err != nil {
		t.Fatal(err)
	}
	got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(got), len(wantLines)) {
		g, w := lineAt(got, i), lineAt(wantLines, i)
		if g != w {
			t.Fatalf("%s line %d:\n got  %s\n want %s", figuresGolden, i+1, g, w)
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

type figureSet struct {
	name string
	arm  *result.ArmResult
}

// figureSets are every arm, and every run of one, of the results files
// the tests hold (testdata/aggregate holds each aggregate fixture's runs
// with their aggregate).
func figureSets(t *testing.T) []figureSet {
	t.Helper()
	var out []figureSet
	add := func(name string, arms []result.ArmResult) {
		for i := range arms {
			n := fmt.Sprintf("%s[%d]", name, i)
			out = append(out, figureSet{n, &arms[i]})
			for j := range arms[i].Runs {
				out = append(out, figureSet{fmt.Sprintf("%s.runs[%d]", n, j), &arms[i].Runs[j]})
			}
		}
	}
	for _, f := range []string{"results", "repeated"} {
		var rep Report
		readJSON(t, filepath.Join("..", "reporters", "testdata", f+".json"), &rep)
		add(f, rep.Arms)
	}
	for _, f := range []string{"sweep", "sweep_grid"} {
		var sw struct {
			Arms []struct {
				Probes []struct {
					Runs []struct {
						Result result.ArmResult `json:"result"`
					} `json:"runs"`
				} `json:"probes"`
			} `json:"arms"`
		}
		readJSON(t, filepath.Join("..", "reporters", "testdata", f+".json"), &sw)
		for i, a := range sw.Arms {
			for j, p := range a.Probes {
				for k, r := range p.Runs {
					add(fmt.Sprintf("%s.arms[%d].probes[%d].runs[%d]", f, i, j, k), []result.ArmResult{r.Result})
				}
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "aggregate", "*.json"))
	for _, f := range files {
		var a result.ArmResult
		readJSON(t, f, &a)
		add(strings.TrimSuffix(filepath.Base(f), ".json"), []result.ArmResult{a})
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
