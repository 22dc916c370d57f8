package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

// A gate over seconds shows in every report as the seconds that held of
// those judged, against its bound in its share of seconds; the recorded
// run (testdata/seconds.json) held p99 < 250 in 3 of baseline's 5.
func TestGatesOverSecondsInEveryReport(t *testing.T) {
	rep := loadReport(t, "testdata/seconds.json")
	for name, render := range map[string]func(*bytes.Buffer) error{
		"table":    func(b *bytes.Buffer) error { return Gates(b, rep) },
		"markdown": func(b *bytes.Buffer) error { return Markdown(b, rep) },
		"html":     func(b *bytes.Buffer) error { return HTML(b, []*experiment.Report{rep}) },
		"junit":    func(b *bytes.Buffer) error { return JUnit(b, rep) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := []string{"3 of 5 s (60%)"}
		if name != "table" {
			want = append(want, "250 in at least 80% of seconds")
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%.3000s", name, w, b.String())
			}
		}
	}
	if got := Measured(rep.Gates[0]); got != "3 of 5 s (60%)" {
		t.Errorf("Measured = %q; want 3 of 5 s (60%%)", got)
	}
	if got := Expected(rep.Gates[len(rep.Gates)-1]); got != "< 1% in at least 100% of seconds" {
		t.Errorf("Expected of a ratio over seconds = %q; want < 1%% in at least 100%% of seconds", got)
	}
}
