package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

// TestReportRefusesValuesNoRunWrites: results whose figures cannot be
// true, or that leave a figure out, exit 2 at the field before any gate
// is checked on them (they read as 0 and passed); a limit on a figure
// neither results has exits 2 as a gate on one does.
func TestReportRefusesValuesNoRunWrites(t *testing.T) {
	b, err := os.ReadFile("../../reporters/testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	fixture := string(b)
	dir := t.TempDir()
	file := func(name, old, new string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Replace(fixture, old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := file("good.json", "", "")
	nullQueries := file("null.json", `"queries": 97,`, `"queries": null,`)
	ratio := file("ratio.json", `"drop_rate": 0,`, `"drop_rate": 1.5,`)
	// a run cut after its first arm: the gates on the three it never ran
	// neither passed nor failed
	partial := results(t, func(r *experiment.Report) { r.Partial, r.Error, r.Arms = true, "arm lock: canceled", r.Arms[:1] })
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"a count null, gated", []string{"report", nullQueries, "--gate", "lock:db.queries <= 10"}, exitUsage, "",
			"null.json: arms[1].db.queries: null, and a run writes db.queries as a number wherever it writes db (accepted: a number 0 or more"},
		{"a ratio above 1", []string{"report", ratio}, exitUsage, "",
			"ratio.json: arms[0].http.drop_rate: 1.5 out of range (accepted: 0 to 1: a ratio)"},
		{"a baseline that cannot be true", []string{"report", "--baseline", ratio, good, "--max-regression", "db.queries=10%"}, exitUsage, "",
			"ratio.json: arms[0].http.drop_rate: 1.5 out of range"},
		{"a limit on a figure neither has", []string{"report", "--baseline", good, good, "--max-regression", "escape.rps=10%"}, exitUsage, "",
			`--max-regression: "escape.rps=10%": no arm of either results has escape.rps: neither run measured it`},
		{"a limit on a figure both have", []string{"report", "--baseline", good, good, "--max-regression", "db.queries=10%"}, exitOK,
			"regressions 0 of 4 checks failed", ""},
		{"a partial run's gates on the arms it ran alone", []string{"report", partial}, exitGatesFailed,
			"gates     2 of 2 failed", "2 of 2 gates failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := herdbench(t, tt.args...)
			if code != tt.want || !strings.Contains(stdout, tt.wantStdout) || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("herdbench %s = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, stdout with %q, stderr with %q",
					strings.Join(tt.args, " "), code, stdout, stderr, tt.want, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}
