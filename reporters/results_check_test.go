package reporters

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
)

// edited is the fixture with edit applied to its JSON tree, written to a
// file.
func edited(t *testing.T, edit func(rep map[string]any, arms []map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var arms []map[string]any
	for _, a := range rep["arms"].([]any) {
		arms = append(arms, a.(map[string]any))
	}
	edit(rep, arms)
	if b, err = json.MarshalIndent(rep, "", "  "); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func obj(a map[string]any, key string) map[string]any { return a[key].(map[string]any) }

// TestReadJSONFileRefusesResultsNoRunWrites: each damage that read as 0,
// or as a figure no run gives, and passed gates, is refused at its field.
func TestReadJSONFileRefusesResultsNoRunWrites(t *testing.T) {
	tests := []struct {
		name string
		edit func(rep map[string]any, arms []map[string]any)
		want string
	}{
		{"a count null", func(_ map[string]any, a []map[string]any) { obj(a[1], "db")["queries"] = nil },
			"r.json: arms[1].db.queries: null, and a run writes db.queries as a number wherever it writes db (accepted: a number 0 or more"},
		{"a ratio left out", func(_ map[string]any, a []map[string]any) { delete(obj(a[1], "http"), "drop_rate") },
			"r.json: arms[1].http: no drop_rate, which a run writes (accepted: each a number"},
		{"db empty", func(_ map[string]any, a []map[string]any) { a[1]["db"] = map[string]any{} },
			"r.json: arms[1].db: no baseline_qps, new_connections, peak_connections, peak_qps, queries, queries_total, which a run writes"},
		{"no http", func(_ map[string]any, a []map[string]any) { delete(a[0], "http") },
			"r.json: arms[0].http: missing (accepted: an object with the arm's requests, ok, drop_rate and latencies"},
		{"http null", func(_ map[string]any, a []map[string]any) { a[0]["http"] = nil },
			"r.json: arms[0].http: null (accepted:"},
		{"no verdict", func(_ map[string]any, a []map[string]any) { delete(a[1], "verdict") },
			"r.json: arms[1].verdict: missing, and a run judges every arm (accepted: recovered, metastable, overloaded, degraded)"},
		{"a verdict no run gives", func(_ map[string]any, a []map[string]any) { a[0]["verdict"] = "bogus" },
			`r.json: arms[0].verdict: "bogus" is not a verdict (accepted: recovered, metastable, overloaded, degraded)`},
		{"a v2 file's verdict is v2's", func(r map[string]any, _ []map[string]any) { r["schema"] = result.Schema },
			`r.json: arms[0].verdict: "degraded" is not a verdict (accepted: recovered, relapsed, metastable, overloaded, recovering)`},
		{"a ratio above 1", func(_ map[string]any, a []map[string]any) { obj(a[0], "http")["drop_rate"] = 1.5 },
			"r.json: arms[0].http.drop_rate: 1.5 out of range (accepted: 0 to 1: a ratio)"},
		{"a ratio below 0", func(_ map[string]any, a []map[string]any) { obj(a[0], "http")["drop_rate"] = -0.2 },
			"r.json: arms[0].http.drop_rate: -0.2 out of range (accepted: 0 to 1: a ratio)"},
		{"a negative count", func(_ map[string]any, a []map[string]any) { obj(a[0], "db")["queries"] = -5 },
			"r.json: arms[0].db.queries: -5 out of range (accepted: a number 0 or more"},
		{"a negative recovery", func(_ map[string]any, a []map[string]any) { a[0]["recovery_ms"] = -100 },
			"r.json: arms[0].recovery_ms: -100 out of range (accepted: 0 to 9223372036854 ms"},
		{"a p99 beyond a duration", func(_ map[string]any, a []map[string]any) { obj(a[0], "http")["p99_ms"] = 1e308 },
			"r.json: arms[0].http.p99_ms: 1e+308 out of range (accepted: 0 to 9223372036854 ms"},
		{"more ok than requests", func(_ map[string]any, a []map[string]any) {
			obj(a[0], "http")["requests"], obj(a[0], "http")["ok"] = 5, 10
		}, "r.json: arms[0].http.ok: 10 is more than http.requests, 5 (accepted: at most the requests"},
		{"an arm named twice", func(_ map[string]any, a []map[string]any) { a[1]["name"] = "none" },
			`r.json: arms[1].name: "none" is arms[0]'s name too (accepted: each arm named once`},
		{"a stored gate its arm does not give", func(r map[string]any, _ []map[string]any) {
			r["gates"].([]any)[0].(map[string]any)["pass"] = true
		}, `r.json: gates[0]: "db.queries <= 150" on none says pass, measured 177, and arms[0] gives fail, measured 177`},
		{"a stored gate passed on no value", func(r map[string]any, _ []map[string]any) {
			r["gates"].([]any)[5].(map[string]any)["pass"] = true
		}, `r.json: gates[5]: "recovery_ms < 2500" on none says pass, measured no value, and arms[0] gives fail, measured no value`},
		{"a whole run's gate on an arm it does not hold", func(r map[string]any, a []map[string]any) {
			r["arms"] = []any{a[0], a[2], a[3]}
		}, `r.json: gates[1].arm: "lock" is not an arm of these results (accepted: none, shed_priority, hedge=50ms`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJSONFile(edited(t, tt.edit))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadJSONFile = %v; want %q", err, tt.want)
			}
		})
	}
}

// TestReadJSONFileDropsGatesOfArmsNotRun: a partial run was cut before
// the arms it does not hold, so their gates are neither passed nor failed.
func TestReadJSONFileDropsGatesOfArmsNotRun(t *testing.T) {
	path := edited(t, func(r map[string]any, a []map[string]any) { r["partial"], r["arms"] = true, []any{a[0]} })
	rep, err := ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gates {
		if g.Arm != "none" {
			t.Errorf("ReadJSONFile(partial, arms: [none]).Gates has %q on %s; want the gates of none alone", g.Gate, g.Arm)
		}
	}
	if len(rep.Gates) != 2 {
		t.Errorf("ReadJSONFile(partial, arms: [none]) has %d gates; want 2, none's", len(rep.Gates))
	}
}

// TestReadJSONFileReadsWhatARunWrites: the fixtures, and each golden
// report as JSON writes it, read back: no figure a run writes is refused.
func TestReadJSONFileReadsWhatARunWrites(t *testing.T) {
	for _, name := range []string{fixture, "testdata/repeated.json", "testdata/golden/report.json", "testdata/seconds.json"} {
		if _, err := ReadJSONFile(name); err != nil {
			t.Errorf("ReadJSONFile(%s) = %v; want it read", name, err)
		}
	}
	rep := loadReport(t, fixture)
	rep.Schema = result.Schema
	for i := range rep.Arms {
		rep.Arms[i].Verdict = result.Recovering
	}
	rep.Gates = result.CheckGates(rep.Plan.Gates, rep.Arms)
	path := filepath.Join(t.TempDir(), "again.json")
	if err := WriteJSONFile(path, rep); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSONFile(path); err != nil {
		t.Errorf("ReadJSONFile(what WriteJSONFile wrote) = %v; want it read", err)
	}
}
