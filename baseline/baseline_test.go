package baseline

import (
	"strings"
	"testing"

	"github.com/herdbench/herdbench/gates"
)

func f(v float64) *float64 { return &v }

func TestParseLimit(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Limit
		wantErr string
	}{
		{in: "db.queries=10%", want: Limit{Expr: "db.queries=10%", Path: "db.queries", Max: 0.1, Percent: true}},
		{in: "http.p99_ms=50", want: Limit{Expr: "http.p99_ms=50", Path: "http.p99_ms", Max: 50}},
		{in: "db.queries", wantErr: "want PATH=MAX"},
		{in: "=5", wantErr: "want PATH=MAX"},
		{in: "db.queries=-1%", wantErr: `MAX "-1%" is not a number 0 or more`},
		{in: "db.queries=lots", wantErr: `MAX "lots"`},
	} {
		got, err := ParseLimit(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "accepted: PATH=MAX") {
				t.Errorf("ParseLimit(%q) error = %v; want %q and the accepted form", tt.in, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("ParseLimit(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if err := Validate([]Limit{{Expr: "x=1", Path: "x"}}, []string{"db.queries"}); err == nil || !strings.Contains(err.Error(), `unknown path "x" (accepted: db.queries)`) {
		t.Errorf("Validate of an unknown path = %v; want it named with the accepted paths", err)
	}
}

func TestCompare(t *testing.T) {
	base := []gates.Arm{
		{Name: "none", Figures: map[string]*float64{"db.queries": f(300), "recovery_ms": f(2000), "cache.hit_ratio": f(0.9)}},
		{Name: "lock", Figures: map[string]*float64{"db.queries": f(100), "recovery_ms": f(1000), "cache.hit_ratio": f(0.9)}},
		{Name: "xfetch", Figures: map[string]*float64{"db.queries": f(300)}},
	}
	run := []gates.Arm{
		{Name: "lock", Figures: map[string]*float64{"db.queries": f(109), "recovery_ms": nil, "cache.hit_ratio": f(0.7)}},
		{Name: "none", Figures: map[string]*float64{"db.queries": f(340), "recovery_ms": f(1800), "cache.hit_ratio": f(0.89)}},
		{Name: "swr", Figures: map[string]*float64{"db.queries": f(100)}},
	}
	var limits []Limit
	for _, s := range []string{"db.queries=10%", "recovery_ms=500", "cache.hit_ratio=5%"} {
		l, err := ParseLimit(s)
		if err != nil {
			t.Fatal(err)
		}
		limits = append(limits, l)
	}
	c := Compare(base, run, limits)
	if strings.Join(c.Arms, ",") != "lock,none" || strings.Join(c.Missing, ",") != "xfetch" || strings.Join(c.Added, ",") != "swr" {
		t.Errorf("arms %v, missing %v, added %v; want lock,none in both, xfetch gone, swr new", c.Arms, c.Missing, c.Added)
	}
	want := map[string]bool{
		"db.queries=10% lock":     true,  // 109 <= 110
		"recovery_ms=500 lock":    false, // recovered before, not now
		"cache.hit_ratio=5% lock": false, // 0.7 < 0.855: a fall is the regression
		"db.queries=10% none":     false, // 340 > 330
		"recovery_ms=500 none":    true,  // faster
		"cache.hit_ratio=5% none": true,
	}
	if len(c.Checks) != len(want) {
		t.Fatalf("checks = %+v; want %d", c.Checks, len(want))
	}
	for _, ch := range c.Checks {
		if w, ok := want[ch.Limit+" "+ch.Arm]; !ok || ch.Pass != w {
			t.Errorf("check %s on %s: pass %v (old %v, new %v, allowed %v); want %v", ch.Limit, ch.Arm, ch.Pass, ch.Old, ch.New, ch.Allowed, w)
		}
	}
	if got := strings.Join(c.Failures(), "; "); got != "3 of 6 regression checks failed; arms of the baseline missing from the run: xfetch" {
		t.Errorf("Failures() = %q; want the failed checks and the missing arm", got)
	}
	// missing arms fail a comparison whose checks all pass
	ok := Compare(base, run[:2], nil)
	ok.Partial = true
	if ok.Passed() || len(ok.Failures()) != 2 {
		t.Errorf("Failures() = %v; want the missing arm and the partial run", ok.Failures())
	}
	for _, d := range c.Deltas {
		if d.Arm == "none" && d.Path == "db.queries" && (d.Change == nil || *d.Change != 40 || d.Percent == nil || *d.Percent < 0.133 || *d.Percent > 0.134) {
			t.Errorf("none db.queries delta = %+v; want +40, +13.3%%", d)
		}
	}
}
