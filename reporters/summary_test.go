package reporters

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
)

func TestSummarizeColumns(t *testing.T) {
	base := []string{"arm", "db queries", "vs none", "peak db q/s", "p50", "p99", "drop rate", "recovery", "verdict"}
	tests := []struct {
		name  string
		edit  func(rep *experiment.Report)
		head  []string
		cells map[string]string // arm -> its last cell
	}{
		{
			name:  "fixture: retries and critical",
			edit:  func(*experiment.Report) {},
			head:  append(slices.Clone(base), "attempts/req", "critical drop"),
			cells: map[string]string{"none": "0.00%", "hedge=50ms": "17.14%"},
		},
		{
			name: "no arm retried, none marked critical",
			edit: func(rep *experiment.Report) {
				for i := range rep.Arms {
					rep.Arms[i].Retries.Amplification = 1
					rep.Arms[i].HTTP.Critical = nil
				}
			},
			head:  base,
			cells: map[string]string{"none": "degraded", "hedge=50ms": "degraded"},
		},
		{
			name: "a stuck arm: what held it",
			edit: func(rep *experiment.Report) {
				rep.Arms[0].Verdict, rep.Arms[0].Loop = result.Metastable, &result.Loop{HeldBy: "attempts x4.9"}
				rep.Arms[1].Loop = &result.Loop{} // recovering: held by nothing
			},
			head:  append(slices.Clone(base), "attempts/req", "critical drop", "held by"),
			cells: map[string]string{"none": "attempts x4.9", "lock": "-", "hedge=50ms": "-"},
		},
		{
			name: "one arm without critical requests",
			edit: func(rep *experiment.Report) {
				for i := range rep.Arms {
					rep.Arms[i].Retries.Amplification = 1
				}
				rep.Arms[1].HTTP.Critical = nil
			},
			head:  append(slices.Clone(base), "critical drop"),
			cells: map[string]string{"lock": "-", "hedge=50ms": "17.14%"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := loadReport(t, fixture)
			tt.edit(rep)
			s := summarize(rep)
			if !slices.Equal(s.head, tt.head) {
				t.Errorf("head = %q; want %q", s.head, tt.head)
			}
			for _, row := range s.rows {
				if len(row) != len(s.head) {
					t.Errorf("row %q has %d cells; want %d", row[0], len(row), len(s.head))
				}
				if want, ok := tt.cells[row[0]]; ok && row[len(row)-1] != want {
					t.Errorf("arm %s: last cell = %q; want %q", row[0], row[len(row)-1], want)
				}
			}
		})
	}
}

func TestExpected(t *testing.T) {
	tests := []struct {
		g    gates.Result
		want string
	}{
		{gates.Result{Path: "db.queries", Op: "<=", Value: 150}, "<= 150"},
		{gates.Result{Path: "http.drop_rate", Op: "<", Value: 0.01}, "< 1%"},
		{gates.Result{Path: "cache.hit_ratio", Op: ">=", Value: 0.995}, ">= 99.5%"},
		{gates.Result{Path: "http.p99_ms", Op: "!=", Value: 2.5}, "!= 2.5"},
	}
	for _, tt := range tests {
		if got := Expected(tt.g); got != tt.want {
			t.Errorf("Expected(%s %s %g) = %q; want %q", tt.g.Path, tt.g.Op, tt.g.Value, got, tt.want)
		}
	}
}

// The table keeps its columns when an arm lacks one: no row is short.
func TestTableRowsKeepTheirColumns(t *testing.T) {
	rep := loadReport(t, fixture)
	rep.Arms[1].HTTP.Critical = nil
	var b strings.Builder
	if err := Table(&b, rep); err != nil {
		t.Fatal(err)
	}
	line := strings.Split(b.String(), "\n")[2] // header, none, lock
	if f := strings.Fields(line); f[0] != "lock" || f[len(f)-1] != "-" {
		t.Errorf("lock's row = %q; want it to end with - for its missing critical drop", line)
	}
}

// A drain that added DB queries is a line under the summary, its share
// db.drain_share, in the table, the Markdown and the HTML alike, and so is
// how long the database worked above its baseline; without them each is
// what it was (the goldens).
func TestTableSaysTheDrainsShare(t *testing.T) {
	rep := loadReport(t, fixture)
	var plain strings.Builder
	if err := Table(&plain, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "drain") || strings.Contains(plain.String(), "db work") {
		t.Errorf("a run whose drains added nothing, without db.above_baseline_ms, says drain or db work:\n%s", plain.String())
	}
	above := int64(11000)
	rep.Arms[0].DB.Queries, rep.Arms[0].DB.DrainQueries, rep.Arms[0].DB.DrainShare = 2539, 1234, 0.486
	rep.Arms[0].Timing.DrainMS, rep.Arms[0].DB.AboveBaselineMS = 11040, &above
	drain := "none: 1,234 of 2,539 db queries after T (48.60%) came in the 11.04s drain, after the load's end"
	work := "above its baseline's db q/s from T: none 11s"
	var text, md strings.Builder
	if err := Table(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	page, _ := renderHTML(t, rep)
	esc := func(s string) string { return strings.ReplaceAll(s, "'", "&#39;") }
	for _, c := range []struct{ format, out, drain, work string }{
		{"table", text.String(), "drain     " + drain + "\n", "db work   " + work + "\n"},
		{"markdown", md.String(), "**drain:** " + drain + ".\n", "**db work:** " + work + ".\n"},
		{"html", page, "<strong>drain:</strong> " + esc(drain) + ".</p>", "<strong>db work:</strong> " + esc(work) + ".</p>"},
	} {
		if !strings.Contains(c.out, c.drain) || strings.Count(c.out, "drain:") > 1 || !strings.Contains(c.out, c.work) {
			t.Errorf("%s lacks, or repeats,\n  %q\nor lacks\n  %q\nin\n%s", c.format, c.drain, c.work, c.out)
		}
	}
}

// The recovery cell says when an arm relapsed: alone when it never came
// back to stay, beside the recovery that held when it did.
func TestRecoveryCellSaysTheRelapse(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		a    result.ArmResult
		want string
	}{
		{result.ArmResult{RecoveryMS: ms(700)}, "700.0ms"},
		{result.ArmResult{}, "not recovered"},
		{result.ArmResult{Verdict: result.Relapsed, RelapseFromTMS: ms(3500)}, "relapsed at T+3.5s"},
		{result.ArmResult{Verdict: result.Recovered, RecoveryMS: ms(5500), RelapseFromTMS: ms(3500)}, "5.5s (relapsed at T+3.5s)"},
		{result.ArmResult{RelapseFromTMS: ms(3500), Aborted: &result.Abort{}}, "aborted"},
	} {
		if got := recoveryString(c.a); got != c.want {
			t.Errorf("recoveryString(recovery %s, relapse %s) = %q; want %q", fmtPtr(c.a.RecoveryMS), fmtPtr(c.a.RelapseFromTMS), got, c.want)
		}
	}
}

func fmtPtr(v *int64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatInt(*v, 10)
}

// The table says how long each arm's database stayed above its baseline's
// work, from db.above_baseline_ms, and when that lasted to the arm's end.
func TestAboveBaselineLine(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	rows := []result.Row{{TMS: 0}, {TMS: 1900}} // the after window ends at T+2 s
	rep := &experiment.Report{Arms: []result.ArmResult{
		{Name: "none", DB: &result.DB{AboveBaselineMS: ms(2000)}, Timeline: rows},
		{Name: "lock", DB: &result.DB{AboveBaselineMS: ms(1000)}, Timeline: rows},
		{Name: "swr", DB: &result.DB{AboveBaselineMS: ms(0)}, Timeline: rows},
		{Name: "old file", DB: &result.DB{}},
	}}
	want := "above its baseline's db q/s from T: none 2s (to the end), lock 1s, swr 0s"
	if got := aboveBaseline(rep); got != want {
		t.Errorf("aboveBaseline = %q; want %q", got, want)
	}
	if got := aboveBaseline(&experiment.Report{Arms: rep.Arms[3:]}); got != "" {
		t.Errorf("aboveBaseline(no arm with the figure) = %q; want nothing", got)
	}
}
