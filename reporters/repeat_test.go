package reporters

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

// repeatedFixture is testdata/repeated.json: a real run of the expire
// trigger on the local testbed, --repeat 3 over the arms none,
// singleflight and lock, with a gate on db.queries and one on the verdict
// (herdbench stampede --repeat 3 --arms none,singleflight,lock --rate 300
// --keys 1000 --hot-keys 50 --warmup 500ms --before 1s --after 4s
// --seed 42 --replicas 2 --gate 'db.queries <= 60'
// --gate 'verdict == recovered').
const repeatedFixture = "testdata/repeated.json"

// The repeated run in every format: testdata/golden/repeated.*; its
// results read back to the same bytes.
func TestGoldenRepeated(t *testing.T) {
	for name, f := range map[string]func(io.Writer, *experiment.Report) error{
		"repeated.txt": Table, "repeated.md": Markdown, "repeated.html": htmlOne, "repeated.junit.xml": JUnit,
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := f(&b, loadReport(t, repeatedFixture)); err != nil {
				t.Fatal(err)
			}
			golden(t, name, b.Bytes())
		})
	}
	var b bytes.Buffer
	if err := JSON(&b, loadReport(t, repeatedFixture)); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(repeatedFixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("JSON(decode(%s)) differs from the file: a field of a repeated run does not round-trip", repeatedFixture)
	}
}

// Each figure of a repeated arm shows its median and its range; a range
// that overlaps the first arm's is marked, one that does not is not, and a
// footnote says what the mark means. The gates say they read the median.
func TestRepeatedSummaryMarksWhatTheRunsDoNotSupport(t *testing.T) {
	rep := loadReport(t, repeatedFixture)
	s := summarize(rep)
	none, sf := s.rows[0], s.rows[1]
	col := func(name string) int {
		for i, h := range s.head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, s.head)
		return -1
	}
	if got := none[col("db queries")]; got != "104 (104–107)" {
		t.Errorf("none's db queries = %q; want the median and the runs' range, 104 (104–107)", got)
	}
	// singleflight's 61–65 queries lie apart from none's 104–107: no mark;
	// its drop rate, 0.00% in every run of both, overlaps: marked
	if got := sf[col("db queries")]; got != "64 (61–65)" {
		t.Errorf("singleflight's db queries = %q; want 64 (61–65), unmarked", got)
	}
	if got := sf[col("drop rate")]; got != "0.00% (every run) "+notSupported {
		t.Errorf("singleflight's drop rate = %q; want 0.00%% (every run) %s", got, notSupported)
	}
	if got := none[col("drop rate")]; strings.Contains(got, notSupported) {
		t.Errorf("the first arm's drop rate = %q; want no mark: it is what the others are compared with", got)
	}
	var b bytes.Buffer
	if err := Table(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Each figure is the median of 3 runs of its arm", notSupported + ": its range overlaps none's",
		"104 (median of 3 runs)", "recovered (most common of 3 runs)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Markdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	if want := "after 4s per arm, 3 runs of each, interleaved"; !strings.Contains(b.String(), want) {
		t.Errorf("Markdown lacks %q:\n%s", want, b.String())
	}
}

// One run's results show no spread, no mark and no footnote: the goldens
// of results.json stay as they were.
func TestOneRunShowsNoSpread(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, loadReport(t, fixture)); err != nil {
		t.Fatal(err)
	}
	for _, not := range []string{notSupported, "median of", "–"} {
		if strings.Contains(b.String(), not) {
			t.Errorf("a run of one has %q in its table:\n%s", not, b.String())
		}
	}
}
