package gates

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Gate
		wantErr string
	}{
		{in: "db.queries <= 150", want: Gate{Expr: "db.queries <= 150", Path: "db.queries", Op: "<=", Value: 150}},
		{in: "lock:db.queries<120", want: Gate{Expr: "lock:db.queries<120", Arm: "lock", Path: "db.queries", Op: "<", Value: 120}},
		{in: " http.drop_rate < 1% ", want: Gate{Expr: "http.drop_rate < 1%", Path: "http.drop_rate", Op: "<", Value: 0.01, Percent: true}},
		{in: "retry=exp:100ms:1s:3:retries.amplification >= 1.5",
			want: Gate{Expr: "retry=exp:100ms:1s:3:retries.amplification >= 1.5", Arm: "retry=exp:100ms:1s:3", Path: "retries.amplification", Op: ">=", Value: 1.5}},
		{in: "client-breaker=5:2s:http.errors.client_breaker != 0",
			want: Gate{Expr: "client-breaker=5:2s:http.errors.client_breaker != 0", Arm: "client-breaker=5:2s", Path: "http.errors.client_breaker", Op: "!=", Value: 0}},
		{in: "recovery_ms == -1.5e3", want: Gate{Expr: "recovery_ms == -1.5e3", Path: "recovery_ms", Op: "==", Value: -1500}},
		{in: "db.queries", wantErr: "no operator"},
		{in: "< 3", wantErr: "no PATH"},
		{in: ":db.queries < 3", wantErr: "empty ARM"},
		{in: "db.queries < lots", wantErr: `a word such as "lots" compares with == or != only`},
		{in: "db.queries < 1e", wantErr: `VALUE "1e" is not a number`},
		{in: "none:verdict != metastable", want: Gate{Expr: "none:verdict != metastable", Arm: "none", Path: "verdict", Op: "!=", Word: "metastable"}},
		{in: "db.queries < NaN", wantErr: `VALUE "NaN"`},
		{in: "db.queries < 1 < 2", wantErr: `VALUE "1 < 2"`},
		{in: "db queries < 1", wantErr: `PATH "db queries"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "accepted: [ARM:]PATH OP VALUE") {
					t.Fatalf("Parse(%q) error = %v; want it to contain %q and the grammar", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestHolds(t *testing.T) {
	for _, tt := range []struct {
		op       string
		measured float64
		want     bool
	}{
		{"<", 9, true}, {"<", 10, false}, {"<=", 10, true}, {"<=", 11, false},
		{">", 11, true}, {">", 10, false}, {">=", 10, true}, {">=", 9, false},
		{"==", 10, true}, {"==", 9, false}, {"!=", 9, true}, {"!=", 10, false},
	} {
		g := Gate{Op: tt.op, Value: 10}
		if got := g.Holds(tt.measured); got != tt.want {
			t.Errorf("(x %s 10).Holds(%g) = %v; want %v", tt.op, tt.measured, got, tt.want)
		}
	}
}

type figures struct {
	DB struct {
		Queries int64 `json:"queries"`
	} `json:"db"`
	HTTP struct {
		DropRate float64 `json:"drop_rate"`
	} `json:"http"`
	RecoveryMS *int64 `json:"recovery_ms"`
	Timeline   []int  `json:"timeline"`
	Name       string `json:"name"`
}

func TestCheck(t *testing.T) {
	var lock, none figures
	lock.DB.Queries, lock.HTTP.DropRate = 100, 0
	rec := int64(1500)
	lock.RecoveryMS = &rec
	none.DB.Queries, none.HTTP.DropRate = 350, 0.02
	none.Timeline = []int{1, 2}
	arm := func(name string, f figures) Arm {
		n, err := Numbers(f)
		if err != nil {
			t.Fatal(err)
		}
		return Arm{Name: name, Figures: n}
	}
	arms := []Arm{arm("none", none), arm("lock", lock)}
	if _, ok := arms[0].Figures["timeline"]; ok {
		t.Error("Numbers kept an array; want arrays skipped")
	}
	if v, ok := arms[0].Figures["recovery_ms"]; !ok || v != nil {
		t.Errorf("Numbers: recovery_ms = %v, %v; want a null leaf", v, ok)
	}
	var gs []Gate
	for _, s := range []string{"db.queries <= 150", "lock:recovery_ms < 2000", "http.drop_rate < 1%", "recovery_ms < 1e9"} {
		g, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	got := Check(gs, arms)
	want := []struct {
		gate, arm string
		measured  float64 // -1: null
		pass      bool
	}{
		{"db.queries <= 150", "none", 350, false},
		{"db.queries <= 150", "lock", 100, true},
		{"lock:recovery_ms < 2000", "lock", 1500, true},
		{"http.drop_rate < 1%", "none", 0.02, false},
		{"http.drop_rate < 1%", "lock", 0, true},
		{"recovery_ms < 1e9", "none", -1, false}, // never recovered: no value fails
		{"recovery_ms < 1e9", "lock", 1500, true},
	}
	if len(got) != len(want) {
		t.Fatalf("Check = %d results; want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		m := -1.0
		if g.Measured != nil {
			m = *g.Measured
		}
		if g.Gate != w.gate || g.Arm != w.arm || m != w.measured || g.Pass != w.pass {
			t.Errorf("result %d = %s on %s: measured %g, pass %v; want %s on %s: %g, %v", i, g.Gate, g.Arm, m, g.Pass, w.gate, w.arm, w.measured, w.pass)
		}
	}
	if n := Failed(got); n != 3 {
		t.Errorf("Failed = %d; want the 3 results that did not pass", n)
	}
}

func TestValidate(t *testing.T) {
	var gs []Gate
	for _, s := range []string{"nope:db.queries < 1", "db.querys < 1", "db.queries < 5%", "http.drop_rate < 5%"} {
		g, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	errs := Validate(gs, []string{"none", "lock"}, []string{"db.queries", "http.drop_rate"}, nil, nil, "gates")
	if len(errs) != 3 {
		t.Fatalf("Validate = %v; want three problems", errs)
	}
	for i, e := range errs {
		if e.Field != "gates" || e.Elem != gs[i].Expr {
			t.Errorf("problem %d = field %q, elem %q; want gates, %q: each names its gate as written", i, e.Field, e.Elem, gs[i].Expr)
		}
	}
	err := errs.Err()
	for _, want := range []string{`unknown arm "nope" (accepted: none, lock)`, `unknown path "db.querys" (accepted: db.queries, http.drop_rate)`,
		"a percentage compares ratios only, and db.queries is not one"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want it to say %q", err, want)
		}
	}
	if strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("Validate = %q; want exactly three problems, one per line", err)
	}
}

func TestParseAll(t *testing.T) {
	gs, errs := ParseAll([]string{"db.queries < 5", "db.queries <", "lock:http.p99_ms <= 200"}, "abort_on")
	if len(gs) != 2 || len(errs) != 1 || errs[0].Field != "abort_on" || errs[0].Elem != "db.queries <" ||
		!strings.Contains(errs[0].Error(), `abort_on: "db.queries <": VALUE "" is not a number`) {
		t.Errorf("ParseAll = %v, %v; want two gates and one problem naming the field and the gate", gs, errs)
	}
}

// A gate given twice, however written, is refused: the second decides
// nothing. Two gates on one path that differ are a range, and kept.
func TestParseAllRefusesAGateTwice(t *testing.T) {
	gs, errs := ParseAll([]string{"http.drop_rate<1%", "http.drop_rate < 0.01", "lock:http.drop_rate < 1%", "http.drop_rate > 0"}, "gates")
	if len(gs) != 3 || len(errs) != 1 || errs[0].Elem != "http.drop_rate < 0.01" ||
		!strings.Contains(errs[0].Error(), `the same gate as "http.drop_rate<1%", given twice (accepted: each gate once)`) {
		t.Errorf("ParseAll = %v, %v; want three gates and the second of the same refused", gs, errs)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"db.queries <= 150", "lock:db.queries<120", "http.drop_rate < 1%", "a:b:c == 1", "<=>", "x !== 1", "x < 1e400", "x<-0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), "accepted:") {
				t.Fatalf("Parse(%q) error %q names no accepted form", s, err)
			}
			return
		}
		if g.Path == "" || !slices.Contains(Ops, g.Op) || strings.ContainsAny(g.Path, "<>=! :") {
			t.Fatalf("Parse(%q) = %+v; want a path without spaces, colons or operators, and a known op", s, g)
		}
		// what parsed once parses the same from its own expression
		again, err := Parse(g.Expr)
		if err != nil || again != g {
			t.Fatalf("Parse(%q) = %+v; Parse of its Expr = %+v, %v", s, g, again, err)
		}
	})
}

// A word path compares with == or != to one of its words: the gate checks
// the arm's word, refuses an unknown word or a number, and a word on a
// number path.
func TestWordGates(t *testing.T) {
	words := map[string][]string{"verdict": {"recovered", "metastable"}}
	var gs []Gate
	for _, s := range []string{"verdict == recovered", "lock:verdict != metastable", "verdict == sunny", "verdict < 1", "db.queries == recovered"} {
		g, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	errs := Validate(gs, []string{"none", "lock"}, []string{"db.queries"}, words, nil, "gates").Error()
	for _, want := range []string{
		`"verdict == sunny": unknown verdict "sunny" (accepted: recovered, metastable)`,
		`"verdict < 1": verdict is a word (accepted: == or != one of recovered, metastable)`,
		`"db.queries == recovered": db.queries is a number, and "recovered" is not`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("Validate = %s; want it to say %s", errs, want)
		}
	}
	if strings.Count(errs, "\n") != 2 {
		t.Errorf("Validate = %s; want three problems, the two good gates none", errs)
	}
	arms := []Arm{{Name: "none", Words: map[string]string{"verdict": "metastable"}}, {Name: "lock", Words: map[string]string{"verdict": "recovered"}}}
	got := Check(gs[:2], arms)
	want := []bool{false, true, true} // none is not recovered; lock is; lock is not metastable
	if len(got) != len(want) {
		t.Fatalf("Check = %+v; want %d results", got, len(want))
	}
	for i, r := range got {
		if r.Pass != want[i] || r.MeasuredWord == nil {
			t.Errorf("Check result %d = %+v; want pass %v with the word measured", i, r, want[i])
		}
	}
}

func TestGatesThatRunDoesNotDecide(t *testing.T) {
	for _, tt := range []struct {
		expr, want string
	}{
		{"http.drop_rate < 150%", "holds"},
		{"http.drop_rate <= 100%", "holds"},
		{"http.drop_rate >= 0%", "holds"},
		{"http.drop_rate < 0%", "fails"},
		{"http.drop_rate > 100%", "fails"},
		{"http.drop_rate == 120%", "fails"},
		{"http.drop_rate < 100%", ""},
		{"http.drop_rate < 1%", ""},
		{"cache.hit_ratio >= 90%", ""},
		{"http.drop_rate < 1.5", "holds"},
		{"http.drop_rate > 1", "fails"},
		{"http.drop_rate < 0.01", ""},
		{"db.queries < 0", "fails"},
		{"db.queries >= 0", "holds"},
		{"db.queries != -1", "holds"},
		{"db.queries > 0", ""},
		{"db.queries < 1e9", ""},
		{"load.achieved_rate > 400", ""},
		{"aborted.at_ms < 0", ""},
		{"trend >= -0.5", ""},
	} {
		g, err := Parse(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := vacuous(g); got != tt.want {
			t.Errorf("vacuous(%s) = %q; want %q", tt.expr, got, tt.want)
		}
	}
	errs := Validate([]Gate{mustParse(t, "http.drop_rate < 150%")}, nil, []string{"http.drop_rate"}, nil, nil, "gates")
	if want := "http.drop_rate < 150% holds whatever the run does: a ratio is 0% to 100%"; len(errs) != 1 || !strings.Contains(errs[0].Msg, want) {
		t.Errorf("Validate(http.drop_rate < 150%%) = %v; want %q", errs, want)
	}
	errs = Validate([]Gate{mustParse(t, "db.queries < 0")}, nil, []string{"db.queries"}, nil, nil, "gates")
	if want := "db.queries < 0 fails whatever the run does: db.queries is never negative (accepted: a bound above 0"; len(errs) != 1 || !strings.Contains(errs[0].Msg, want) {
		t.Errorf("Validate(db.queries < 0) = %v; want %q", errs, want)
	}
}

func TestAMisreadOperatorIsNamed(t *testing.T) {
	for in, want := range map[string]string{
		"db.queries => 10": `read the operator "=>", which is not one (did you mean >=?)`,
		"db.queries = 10":  `read the operator "=", which is not one (did you mean ==?)`,
		"db.queries <<= 1": `read the operator "<<=", which is not one (accepted:`,
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want %q", in, err, want)
		}
	}
}

func TestAnUnknownPathSuggestsTheNearest(t *testing.T) {
	paths := []string{"aborted.at_ms", "api.loads", "cache.hits", "db.peak_qps", "db.queries", "db.queries_total", "http.p99_ms", "http.p999_ms", "recovery_ms", "warm.queries"}
	if got, want := Nearest("db.querys", paths, 3), []string{"db.queries", "db.queries_total", "warm.queries"}; !slices.Equal(got, want) {
		t.Errorf("Nearest(db.querys) = %q; want %q", got, want)
	}
	many := slices.Clone(paths)
	for i := range 20 {
		many = append(many, fmt.Sprintf("z.path_%d", i))
	}
	if got := Accepted("http.p99", many); !strings.HasPrefix(got, "nearest: http.p99_ms, http.p999_ms") || !strings.Contains(got, "all 30 paths: "+ContractDoc) {
		t.Errorf("Accepted(http.p99) = %q; want the nearest two first, and where all 30 are", got)
	}
	// a stop condition's 18 live figures, which no page lists apart: all
	if got := Accepted("x", paths); got != "accepted: "+strings.Join(paths, ", ") {
		t.Errorf("Accepted(x) among ten = %q; want all ten", got)
	}
	if got := Accepted("x", paths[:2]); got != "accepted: aborted.at_ms, api.loads" {
		t.Errorf("Accepted(x) among two = %q; want both", got)
	}
}

func mustParse(t *testing.T, s string) Gate {
	t.Helper()
	g, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The escape load's share of the rate that tipped the arm is a ratio: a
// gate reads it as a percentage (none:escape.share >= 50%), and an arm
// that never came back, its share null, fails it.
func TestTheEscapeShareIsARatio(t *testing.T) {
	g, err := Parse("none:escape.share >= 50%")
	if err != nil {
		t.Fatal(err)
	}
	if errs := Validate([]Gate{g}, []string{"none"}, []string{"escape.share"}, nil, nil, "gates"); len(errs) > 0 {
		t.Fatalf("Validate(%s) = %v; want none", g.Expr, errs)
	}
	type escape struct {
		Share *float64 `json:"share"`
	}
	half := 0.5
	for _, c := range []struct {
		share *float64
		pass  bool
	}{{&half, true}, {nil, false}} {
		n, err := Numbers(struct {
			Escape escape `json:"escape"`
		}{escape{c.share}})
		if err != nil {
			t.Fatal(err)
		}
		if r := Check([]Gate{g}, []Arm{{Name: "none", Figures: n}}); len(r) != 1 || r[0].Pass != c.pass {
			t.Errorf("%s on share %v = %+v; want pass %t", g.Expr, c.share, r, c.pass)
		}
	}
}
