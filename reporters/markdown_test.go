package reporters

import (
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

func TestMarkdownEscaping(t *testing.T) {
	tests := []struct {
		f        func(string) string
		name, in string
		want     string
	}{
		{code, "code", "hedge=50ms", "`hedge=50ms`"},
		{code, "code", "a`b", "``a`b``"},
		{code, "code", "`x`", "`` `x` ``"},
		{code, "code", "", ""},
		{codeCell, "codeCell", "a|b", "`a\\|b`"},
		{codeCell, "codeCell", "db.queries <= 150", "`db.queries <= 150`"},
		{mdText, "mdText", "<script>*x*</script>", `\<script\>\*x\*\</script\>`},
		{mdText, "mdText", "p99_ms | 1\n2", `p99\_ms \| 1 2`},
		{mdText, "mdText", "&lt; [a](b) #1 ~x~", `\&lt; \[a\](b) \#1 \~x\~`},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s(%q) = %q; want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// cells counts the cells of a Markdown table row: the pipes not escaped
// with a backslash, less one.
func cells(row string) int {
	n := 0
	for i := range len(row) {
		if row[i] == '|' && (i == 0 || row[i-1] != '\\') {
			n++
		}
	}
	return n - 1
}

// An arm name or a gate with pipes, backticks and HTML keeps every table
// row to its columns and shows up only as code.
func TestMarkdownHostileNames(t *testing.T) {
	rep := loadReport(t, fixture)
	hostile := "x|y`<b>z</b>"
	rep.Arms[1].Name = hostile
	rep.Gates[1].Arm = hostile
	rep.Gates[1].Gate = "a|b:db.queries <= 150"
	var b strings.Builder
	if err := Markdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, codeCell(hostile)) {
		t.Errorf("Markdown lacks the name %q as a code span in a cell, %s:\n%s", hostile, codeCell(hostile), out)
	}
	rest := strings.NewReplacer(codeCell(hostile), "", code(hostile), "").Replace(out)
	if strings.Contains(rest, "<b>") {
		t.Errorf("the name %q appears outside a code span:\n%s", hostile, out)
	}
	tables := 0
	var want int
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") {
			want = 0
			continue
		}
		if want == 0 {
			want, tables = cells(line), tables+1
		}
		if got := cells(line); got != want {
			t.Errorf("row has %d cells; want %d: %s", got, want, line)
		}
	}
	if tables != 2 {
		t.Errorf("found %d tables; want 2 (summary, gates):\n%s", tables, out)
	}
}

func TestMarkdownSections(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(*experiment.Report)
		want     []string
		wantNone []string
	}{
		{"fixture", func(*experiment.Report) {},
			[]string{"**6 of 9 gates failed.**", "- `hedge=50ms` at T+1.5s by `http.p99_ms > 990`", "| `none` | 177 | = |"},
			[]string{"Partial", "All "}},
		{"no gates, no abort", func(r *experiment.Report) { r.Gates, r.Arms[3].Aborted = nil, nil },
			[]string{"| arm |"},
			[]string{"Gates", "Stopped early"}},
		{"all pass", func(r *experiment.Report) {
			for i := range r.Gates {
				r.Gates[i].Pass = true
			}
		}, []string{"All 9 gates passed."}, []string{"❌"}},
		{"partial", func(r *experiment.Report) { r.Partial, r.Error = true, "interrupted <ctrl-c>" },
			[]string{"Partial results: not every arm finished: interrupted \\<ctrl-c\\>"}, nil},
		{"one arm", func(r *experiment.Report) { r.Arms, r.Gates = r.Arms[:1], nil },
			[]string{"| `none` |"}, []string{"Fewest"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := loadReport(t, fixture)
			tt.edit(rep)
			var b strings.Builder
			if err := Markdown(&b, rep); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(b.String(), s) {
					t.Errorf("Markdown lacks %q:\n%s", s, b.String())
				}
			}
			for _, s := range tt.wantNone {
				if strings.Contains(b.String(), s) {
					t.Errorf("Markdown has %q; want none:\n%s", s, b.String())
				}
			}
		})
	}
}
