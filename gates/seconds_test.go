package gates

import (
	"strings"
	"testing"
)

// A gate over seconds is a gate on one second with the least share of
// seconds it wants; a tail that is not "for SHARE of seconds" is refused,
// naming what was read and the form.
func TestParseGatesOverSeconds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Gate
	}{
		{"http.p99_ms < 250 for 95% of seconds", Gate{Expr: "http.p99_ms < 250 for 95% of seconds", Path: "http.p99_ms", Op: "<", Value: 250, Share: 0.95}},
		{" lock:http.drop_rate<1%\tfor 99.5%  of seconds ", Gate{Expr: "lock:http.drop_rate<1%\tfor 99.5%  of seconds", Arm: "lock", Path: "http.drop_rate", Op: "<",
			Value: 0.01, Percent: true, Share: 0.995}},
		{"requests.search.p99_ms <= 80 for 100% of seconds", Gate{Expr: "requests.search.p99_ms <= 80 for 100% of seconds", Path: "requests.search.p99_ms", Op: "<=", Value: 80, Share: 1}},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"http.p99_ms < 250 for 95% of 1s", `read "for 95% of 1s" after the gate's VALUE`},
		{"http.p99_ms < 250 for 95%", `read "for 95%" after the gate's VALUE`},
		{"http.p99_ms < 250 for", `read "for" after the gate's VALUE`},
		{"http.p99_ms < 250 for 95 of seconds", `SHARE "95" is not a percentage above 0% and at most 100%`},
		{"http.p99_ms < 250 for 0% of seconds", `SHARE "0%"`},
		{"http.p99_ms < 250 for 101% of seconds", `SHARE "101%"`},
		{"http.p99_ms < 250 for NaN% of seconds", `SHARE "NaN%"`},
		{"http.p99_ms < 250 in 95% of 1s", `VALUE "250 in 95% of 1s" is not a number, or a percentage such as 1%, and a gate over seconds ends with for SHARE of seconds`},
		{"verdict == recovered for 95% of seconds", `a word such as "recovered" is the arm's, not a second's`},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "accepted: [ARM:]PATH OP VALUE") {
			t.Errorf("Parse(%q) error = %v; want it to say %q and the form", c.in, err, c.want)
		}
	}
	a, b := mustParse(t, "http.p99_ms < 250 for 95% of seconds"), mustParse(t, "http.p99_ms < 250")
	if Same(a, b) {
		t.Errorf("Same(%q, %q) = true; want a gate over seconds apart from the gate on the arm", a.Expr, b.Expr)
	}
	if !Same(a, mustParse(t, "http.p99_ms<250 for 95% of seconds")) {
		t.Errorf("Same: the spaces made %q another gate", a.Expr)
	}
}

// Each second is judged on its value (none does not hold), and the gate
// passes when the share that held is at least the share wanted: 19 of 20
// is 95%, 18 of 20 is not; no second at all fails, measured nothing.
func TestCheckSeconds(t *testing.T) {
	g := mustParse(t, "http.p99_ms < 250 for 95% of seconds")
	ws := func(held, failed, none int) []Window {
		var out []Window
		for i := range held + failed + none {
			var v *float64
			switch {
			case i < held:
				v = ptr(100)
			case i < held+failed:
				v = ptr(250)
			}
			out = append(out, Window{StartMS: int64(2000 + 1000*i), Value: v})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		windows  []Window
		measured float64 // -1: null
		pass     bool
	}{
		{"19 of 20", ws(19, 1, 0), 0.95, true},
		{"18 of 20", ws(18, 2, 0), 0.9, false},
		{"19 of 20, one without a value", ws(19, 0, 1), 0.95, true},
		{"18 of 20, two without a value", ws(18, 0, 2), 0.9, false},
		{"no second", nil, -1, false},
	} {
		r := Check([]Gate{g}, []Arm{{Name: "lock", Seconds: map[string][]Window{"http.p99_ms": c.windows}}})[0]
		m := -1.0
		if r.Measured != nil {
			m = *r.Measured
		}
		if m != c.measured || r.Pass != c.pass || r.Seconds == nil || r.Seconds.Count != len(c.windows) || r.Seconds.Share != 0.95 {
			t.Errorf("%s: measured %g, pass %v, seconds %+v; want %g, %v over %d seconds", c.name, m, r.Pass, r.Seconds, c.measured, c.pass, len(c.windows))
			continue
		}
		held := 0
		for i, w := range r.Seconds.Windows {
			want := w.Value != nil && *w.Value < 250
			if w.Held != want || w.StartMS != c.windows[i].StartMS {
				t.Errorf("%s: second %d = %+v; want held %v at %d", c.name, i, w, want, c.windows[i].StartMS)
			}
			if w.Held {
				held++
			}
		}
		if held != r.Seconds.Held {
			t.Errorf("%s: held = %d; the seconds say %d", c.name, r.Seconds.Held, held)
		}
	}
	if c := (Result{Runs: 3, Seconds: &Seconds{}}).Of(); c != "over 3 runs' seconds" {
		t.Errorf("Of() of a repeated arm's gate over seconds = %q; want over 3 runs' seconds", c)
	}
}

// A gate over seconds names a path the caller says may be judged so: one
// on another figure of the arm says it cannot be and lists those that
// can, and where none can (a stop condition) it says so.
func TestValidateGatesOverSeconds(t *testing.T) {
	paths, seconds := []string{"db.queries", "http.p50_ms", "http.p99_ms"}, []string{"http.p99_ms"}
	for _, c := range []struct {
		gate    string
		seconds []string
		want    string
	}{
		{"http.p99_ms < 250 for 95% of seconds", seconds, ""},
		{"http.p50_ms < 250 for 95% of seconds", seconds, "http.p50_ms cannot be judged over seconds: the timeline's rows do not carry it second by second (accepted over seconds: http.p99_ms)"},
		{"http.p98_ms < 250 for 95% of seconds", seconds, `unknown path "http.p98_ms" (accepted over seconds: http.p99_ms)`},
		{"http.p99_ms < 250 for 95% of seconds", nil, "http.p99_ms cannot be judged over seconds here (accepted: [ARM:]PATH OP VALUE, without for SHARE of seconds)"},
		{"http.p99_ms < 0 for 95% of seconds", seconds, "whatever the run does"},
		{"db.queries < 1% for 95% of seconds", []string{"db.queries"}, "a percentage compares ratios only"},
		{"tipped:http.p99_ms < 250 for 95% of seconds", seconds, `unknown arm "tipped"`},
	} {
		errs := Validate([]Gate{mustParse(t, c.gate)}, []string{"lock"}, paths, nil, c.seconds, "gates")
		if c.want == "" && len(errs) > 0 || c.want != "" && (len(errs) != 1 || !strings.Contains(errs.Error(), c.want)) {
			t.Errorf("Validate(%q, over seconds %v) = %v; want %q", c.gate, c.seconds, errs, c.want)
		}
	}
}

func ptr(v float64) *float64 { return &v }
