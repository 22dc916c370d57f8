package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// results writes the renderers' fixture, changed by edit, to a file.
func results(t *testing.T, edit func(*experiment.Report)) string {
	t.Helper()
	b, err := os.ReadFile("../../reporters/testdata/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	edit(&rep)
	b, _ = json.Marshal(rep)
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportExitCodes(t *testing.T) {
	// the fixture's hedge arm was stopped early: every report of it fails
	stopped := results(t, func(*experiment.Report) {})
	clean := results(t, func(r *experiment.Report) {
		r.Arms = r.Arms[:3]
		r.Gates = result.CheckGates(r.Plan.Gates, r.Arms)
	})
	worse := results(t, func(r *experiment.Report) {
		r.Arms[1].DB.Queries = r.Arms[1].DB.Queries * 3 / 2
		r.Gates = result.CheckGates(r.Plan.Gates, r.Arms) // as the run checked them: report refuses gates its arms do not give
	})
	// the fixture is a v1 file, its arms degraded; as v2 they read recovering
	v2 := results(t, func(r *experiment.Report) {
		r.Schema, r.Arms = result.Schema, r.Arms[:3]
		for i := range r.Arms {
			r.Arms[i].Verdict = result.Recovering
		}
		r.Plan.Gates, r.Gates = nil, nil
	})
	out := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"a run with an arm stopped", []string{"report", stopped}, exitGatesFailed, "aborted   hedge=50ms at T+1.5s",
			"arm hedge=50ms was stopped at +1500ms: http.p99_ms > 990 (exit 99)"},
		{"saved gates, one failing", []string{"report", clean}, exitGatesFailed, "db.queries <= 150          none            177        FAIL",
			"4 of 7 gates failed"},
		{"gates checked again", []string{"report", clean, "--gate", "lock:db.queries < 100", "--gate", "http.drop_rate < 5%"}, exitOK,
			"lock:db.queries < 100   lock            97         pass", ""},
		{"a gate failing on the saved figures", []string{"report", clean, "--gate", "lock:db.queries < 90"}, exitGatesFailed,
			"lock:db.queries < 90   lock   97         FAIL", "1 of 1 gates failed"},
		{"an unknown path", []string{"report", clean, "--gate", "db.querys < 1"}, exitUsage, "",
			`unknown path "db.querys" (nearest: db.queries, db.queries_total, warm.queries; all `},
		{"not a results file", []string{"report", "../../go.mod"}, exitUsage, "", "go.mod:1: not JSON at column 1: invalid character 'm' looking for beginning of value (accepted: a results.json that herdbench stampede or run wrote"},
		{"a v1 file keeps its words", []string{"report", clean, "--gate", "verdict == degraded"}, exitOK,
			"verdict == degraded   none            degraded   pass", ""},
		{"a v1 file has no recovering", []string{"report", clean, "--gate", "verdict != recovering"}, exitUsage, "",
			`unknown verdict "recovering" (accepted: recovered, metastable, overloaded, degraded)`},
		{"a v2 file has no degraded", []string{"report", v2, "--gate", "verdict != degraded"}, exitUsage, "",
			`unknown verdict "degraded" (accepted: recovered, relapsed, metastable, overloaded, recovering)`},
		{"a v2 file's words", []string{"report", v2, "--gate", "verdict == recovering"}, exitOK,
			"verdict == recovering   none            recovering   pass", ""},
		{"a schema of neither", []string{"report", results(t, func(r *experiment.Report) { r.Schema = "herdbench.results/v0" })}, exitUsage, "",
			`schema "herdbench.results/v0" (accepted: herdbench.results/v2, as herdbench stampede writes it, or herdbench.results/v1`},
		{"json to a file", []string{"report", clean, "-o", "json=" + filepath.Join(out, "again.json")}, exitGatesFailed, "arm ", ""},
		{"one format per run", []string{"report", clean, clean, "-o", "table"}, exitUsage, "", "-o table: shows one run, and 2 results files were given (accepted: html"},
		{"baseline: same figures", []string{"report", "--baseline", clean, clean, "--max-regression", "db.queries=10%"}, exitOK,
			"regressions 0 of 3 checks failed", ""},
		{"baseline: 50% more queries", []string{"report", "--baseline", stopped, worse, "--max-regression", "db.queries=10%", "-o", "markdown"}, exitGatesFailed,
			"| `db.queries=10%` | `lock` | 97 | 145 | 106.7 | ❌ **FAIL** |", "1 of 4 regression checks failed"},
		{"baseline: an unknown path", []string{"report", "--baseline", clean, clean, "--max-regression", "db.qs=1%"}, exitUsage, "",
			`unknown path "db.qs"`},
		{"baseline: a format a comparison lacks", []string{"report", "--baseline", clean, clean, "-o", "html"}, exitUsage, "",
			`--output: html: unknown format "html" (accepted: json, markdown, table,`},
		{"baseline: two runs", []string{"report", "--baseline", clean, clean, clean}, exitUsage, "", "compares one run, got 2"},
		{"limits need a baseline", []string{"report", clean, "--max-regression", "db.queries=1%"}, exitUsage, "", "--max-regression: needs --baseline"},
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
	// the re-rendered JSON is the same results
	again, err := os.ReadFile(filepath.Join(out, "again.json"))
	if err != nil || !strings.Contains(string(again), `"schema": "herdbench.results/v1"`) {
		t.Errorf("-o json=FILE wrote %.80q, %v; want the results again", again, err)
	}
}
