package reporters

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// update rewrites the golden files from the renderers' current output:
// go test ./reporters -update
var update = flag.Bool("update", false, "rewrite testdata/golden/* from the current output")

// fixture is testdata/results.json: a real run of the expire trigger with
// the arms none, lock, shed_priority and hedge=50ms, 10% critical requests,
// three gates (some failing) and the hedge arm stopped by a stop condition.
const fixture = "testdata/results.json"

// loadReport decodes path strictly: a field the types do not know is an
// error, so the golden files cannot silently drop one.
func loadReport(t *testing.T, path string) *experiment.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeReport(t, path, b)
}

// decodeReport decodes results strictly, as loadReport does.
func decodeReport(t *testing.T, name string, b []byte) *experiment.Report {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rep experiment.Report
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return &rep
}

// golden compares got with testdata/golden/name byte for byte, or rewrites
// the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reporters -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./reporters -update accepts it): %s", path, firstDiff(got, want))
	}
}

// firstDiff says where got and want first differ, line by line.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d = %q; want %q (%d lines; want %d)", i+1, gl, wl, len(g), len(w))
		}
	}
	return "same lines"
}

// render runs f on the fixture and returns its output, failing the test on
// an error.
func render(t *testing.T, f func(io.Writer, *experiment.Report) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b, loadReport(t, fixture)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenTable(t *testing.T) {
	golden(t, "table.txt", render(t, Table))
}

// A v2 run whose first arm was stuck: its verdict, and the figure that
// held it down in a column of its own; the others recovering.
func TestGoldenHeldBy(t *testing.T) {
	stuck := func(rep *experiment.Report) *experiment.Report {
		rep.Schema = result.Schema
		for i := range rep.Arms {
			rep.Arms[i].Verdict = result.Recovering
		}
		ratio := &result.LoopFigure{Before: 1, After: 4.9, Ratio: 4.9}
		rep.Arms[0].Verdict, rep.Arms[0].Loop = result.Metastable, &result.Loop{AttemptsPerRequest: ratio, HeldBy: "attempts x4.9"}
		return rep
	}
	for name, f := range map[string]func(io.Writer, *experiment.Report) error{"held.txt": Table, "held.md": Markdown} {
		var b bytes.Buffer
		if err := f(&b, stuck(loadReport(t, fixture))); err != nil {
			t.Fatal(err)
		}
		golden(t, name, b.Bytes())
	}
}

// A run with --escape: the first arm stuck, stepped down to 75% (stuck for
// its limit) and to 50% (back after 1.2 s), the escape load in the
// summary and its steps in a table of their own; the second arm never
// stuck; every format.
func TestGoldenEscape(t *testing.T) {
	escaped := func(rep *experiment.Report) *experiment.Report {
		rep.Schema = result.Schema
		for i := range rep.Arms {
			rep.Arms[i].Verdict = result.Recovering
			rep.Arms[i].Escape = &result.EscapeResult{FromRPS: 100, Steps: []result.EscapeStep{}}
		}
		start, rate, share, back := int64(7300), 50.0, 0.5, int64(1200)
		rep.Arms[0].Verdict = result.Metastable
		rep.Arms[0].Escape = &result.EscapeResult{FromRPS: 100, StartMS: &start, RPS: &rate, Share: &share, Steps: []result.EscapeStep{
			{Share: 0.75, RPS: 75, StartMS: 7300, EndMS: 22600, JudgedToMS: 17300, OfferedRPS: 75, GoodputRPS: 12.4, AttemptsRPS: 360, DBQPS: 21, Read: result.StepStuck},
			{Share: 0.5, RPS: 50, StartMS: 22600, EndMS: 30000, JudgedToMS: 24800, OfferedRPS: 50, GoodputRPS: 41.5, AttemptsRPS: 80, DBQPS: 48, Read: result.StepRecovered, RecoveryMS: &back},
		}}
		return rep
	}
	for name, f := range map[string]func(io.Writer, *experiment.Report) error{"escape.txt": Table, "escape.md": Markdown, "escape.html": func(w io.Writer, r *experiment.Report) error { return HTML(w, []*experiment.Report{r}) }, "escape.junit.xml": JUnit} {
		var b bytes.Buffer
		if err := f(&b, escaped(loadReport(t, fixture))); err != nil {
			t.Fatal(err)
		}
		golden(t, name, b.Bytes())
	}
}

func TestGoldenJSON(t *testing.T) {
	got := render(t, JSON)
	golden(t, "report.json", got)
	// the results file decodes into the Report and encodes back to the same
	// bytes: no field is lost or renamed on the way
	want, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("JSON(decode(%s)) differs from the file: a field does not round-trip", fixture)
	}
}

func TestGoldenMarkdown(t *testing.T) {
	golden(t, "report.md", render(t, Markdown))
}

func TestGoldenJUnit(t *testing.T) {
	golden(t, "junit.xml", render(t, JUnit))
}

func TestGoldenHTML(t *testing.T) {
	golden(t, "report.html", render(t, func(w io.Writer, rep *experiment.Report) error {
		return HTML(w, []*experiment.Report{rep})
	}))
}

// Every format renders results with nothing in them (no arms, no gates, no
// environment) without an error.
func TestEmptyReport(t *testing.T) {
	rep := &experiment.Report{}
	for name, f := range map[string]func(io.Writer, *experiment.Report) error{
		"table": Table, "json": JSON, "markdown": Markdown, "junit": JUnit,
		"html": func(w io.Writer, r *experiment.Report) error { return HTML(w, []*experiment.Report{r}) },
	} {
		var b bytes.Buffer
		if err := f(&b, rep); err != nil || b.Len() == 0 {
			t.Errorf("%s(empty report) = %d bytes, %v; want output and no error", name, b.Len(), err)
		}
	}
}
