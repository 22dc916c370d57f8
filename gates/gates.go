// Package gates provides the pass/fail rules a CI job puts on an
// experiment's results, and the stop conditions of a running arm.
//
// A gate is "[ARM:]PATH OP VALUE":
//
//	db.queries <= 150            every arm
//	lock:db.queries < 120        the arm named lock only
//	http.drop_rate < 1%          a ratio, written as a percentage
//	retry=exp:100ms:1s:3:retries.amplification <= 2
//
// PATH is a dotted path to a number in an arm's results JSON
// (db.queries, http.p99_ms, http.errors.shed, recovery_ms, ...); OP is one
// of < <= > >= == !=; VALUE is a number, or a percentage for ratios. ARM may
// itself hold colons (client arms do): PATH is what follows the last one.
// A path that holds a word (verdict) compares with == or != to a word:
//
//	verdict == recovered         every arm came back
//	none:verdict != metastable   the arm named none did not stay down
//
// A figure without a value (recovery_ms of an arm that never recovered is
// null) fails every gate on it.
//
// A gate over seconds judges a figure in each whole second after the
// arm's settle, and passes when it held in at least SHARE of them
// (seconds.go):
//
//	http.p99_ms < 250 for 95% of seconds
//	lock:http.drop_rate < 1% for 99% of seconds
package gates

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/herd"
)

// Ops lists the accepted operators, longest first so parsing finds "<="
// before "<".
var Ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// Gate is one parsed rule.
type Gate struct {
	Expr    string  `json:"expr"`          // as written
	Arm     string  `json:"arm,omitempty"` // empty: every arm
	Path    string  `json:"path"`
	Op      string  `json:"op"`
	Value   float64 `json:"value"`
	Percent bool    `json:"percent,omitempty"` // VALUE was written as a percentage
	Word    string  `json:"word,omitempty"`    // VALUE was a word, which a word path compares with (== or !=)
	// Share is a gate over seconds': the least share of the whole
	// seconds after the settle in which PATH OP VALUE must hold; 0: a
	// gate on the arm's figure
	Share float64 `json:"share,omitempty"`
}

const grammar = "[ARM:]PATH OP VALUE [for SHARE of seconds], such as lock:db.queries <= 120, http.drop_rate < 1% or http.p99_ms < 250 for 95% of seconds"

// Parse reads one gate. Its errors name the gate, the part that is wrong
// and the accepted form.
func Parse(s string) (Gate, error) {
	g, err := parse(s)
	if err != nil {
		return Gate{}, fmt.Errorf("gate %q: %w", s, err)
	}
	return g, nil
}

// parse reads one gate; its errors name the part that is wrong.
func parse(s string) (Gate, error) {
	whole := strings.TrimSpace(s)
	bad := func(format string, args ...any) (Gate, error) {
		return Gate{}, fmt.Errorf("%s (accepted: %s; OP one of %s)", fmt.Sprintf(format, args...), grammar, strings.Join(Ops, " "))
	}
	expr, share, err := cutSeconds(whole)
	if err != nil {
		return Gate{}, err
	}
	// the operator is the last run of its characters: an arm's name
	// before it may hold = (retry=exp:...), a VALUE after it none
	if j := strings.LastIndexAny(expr, opChars); j >= 0 {
		head := strings.TrimRight(expr[:j+1], opChars)
		run := expr[len(head) : j+1]
		if !slices.Contains(Ops, run) {
			return bad("read the operator %q, which is not one%s", run, opHint(run))
		}
	}
	at, op := FindOp(expr)
	if at < 0 {
		return bad("no operator")
	}
	left, right := strings.TrimSpace(expr[:at]), strings.TrimSpace(expr[at+len(op):])
	g := Gate{Expr: whole, Op: op, Path: left, Share: share}
	if i := strings.LastIndex(left, ":"); i >= 0 {
		g.Arm, g.Path = strings.TrimSpace(left[:i]), strings.TrimSpace(left[i+1:])
		if g.Arm == "" {
			return bad("empty ARM before ':'")
		}
	}
	if g.Path == "" {
		return bad("no PATH before %s", op)
	}
	if strings.ContainsAny(g.Path, " \t<>=!") {
		return bad("PATH %q is not a dotted path such as db.queries", g.Path)
	}
	if isWord(right) {
		if op != "==" && op != "!=" {
			return bad("a word such as %q compares with == or != only", right)
		}
		if share > 0 {
			return Gate{}, fmt.Errorf("a word such as %q is the arm's, not a second's (accepted: %s, on a number; or %s, on the arm)", right, secondsForm, g.Path+" "+op+" "+right)
		}
		g.Word = right
		return g, nil
	}
	num := right
	if p, ok := strings.CutSuffix(right, "%"); ok {
		num, g.Percent = strings.TrimSpace(p), true
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("VALUE %q is not a number, or a percentage such as 1%%%s", right, secondsHint(right))
	}
	if g.Percent {
		v /= 100
	}
	g.Value = v
	return g, nil
}

// FindOp is the first operator in s, longest first, and where it begins;
// -1 with none.
func FindOp(s string) (int, string) {
	for i := range len(s) {
		for _, o := range Ops {
			if strings.HasPrefix(s[i:], o) {
				return i, o
			}
		}
	}
	return -1, ""
}

// isWord says whether s is a word VALUE: lowercase letters and
// underscores, such as recovered.
func isWord(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz_") == ""
}

// HoldsWord says whether a measured word passes the gate.
func (g Gate) HoldsWord(measured string) bool { return (measured == g.Word) == (g.Op == "==") }

// Holds says whether a measured value passes the gate.
func (g Gate) Holds(measured float64) bool {
	switch g.Op {
	case "<":
		return measured < g.Value
	case "<=":
		return measured <= g.Value
	case ">":
		return measured > g.Value
	case ">=":
		return measured >= g.Value
	case "==":
		return measured == g.Value
	case "!=":
		return measured != g.Value
	}
	return false
}

// Numbers flattens the JSON of v into the dotted paths of its numbers.
// Arrays are skipped (the timeline is not a gate's business); a null leaf
// maps to nil. With every pointer of v set, the keys are every path a gate
// may name.
func Numbers(v any) (map[string]*float64, error) {
	out := map[string]*float64{}
	err := leaves(v, func(p string, leaf any) {
		switch x := leaf.(type) {
		case float64:
			out[p] = &x
		case nil:
			out[p] = nil
		}
	})
	return out, err
}

// Words flattens the JSON of v into the dotted paths of its strings, as
// Numbers does its numbers: what a word gate reads.
func Words(v any) (map[string]string, error) {
	out := map[string]string{}
	err := leaves(v, func(p string, leaf any) {
		if x, ok := leaf.(string); ok {
			out[p] = x
		}
	})
	return out, err
}

// leaves calls fn with the dotted path of every leaf of v's JSON objects
// but arrays.
func leaves(v any, fn func(path string, leaf any)) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return err
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := strings.TrimPrefix(prefix+"."+k, ".")
			switch x := v.(type) {
			case map[string]any:
				walk(p, x)
			case []any:
			default:
				fn(p, x)
			}
		}
	}
	walk("", tree)
	return nil
}

// Validate checks gates against the arms and paths they may name (words:
// the word paths, each with its accepted words; seconds: the paths a gate
// over seconds may name, none for nil), and returns every problem at
// once, each listing the accepted values.
func Validate(gs []Gate, arms, paths []string, words map[string][]string, seconds []string, field string) herd.FieldErrors {
	var errs herd.FieldErrors
	bad := func(g Gate, format string, args ...any) {
		errs = append(errs, &herd.FieldError{Field: field, Elem: g.Expr, Msg: fmt.Sprintf(format, args...)})
	}
	for _, g := range gs {
		if g.Arm != "" && !slices.Contains(arms, g.Arm) {
			bad(g, "unknown arm %q (accepted: %s)", g.Arm, strings.Join(arms, ", "))
		}
		accepted, isWord := words[g.Path]
		switch {
		case isWord && g.Word == "":
			bad(g, "%s is a word (accepted: == or != one of %s)", g.Path, strings.Join(accepted, ", "))
		case isWord && !slices.Contains(accepted, g.Word):
			bad(g, "unknown %s %q (accepted: %s)", g.Path, g.Word, strings.Join(accepted, ", "))
		case isWord:
		case g.Share > 0 && !slices.Contains(seconds, g.Path):
			bad(g, "%s", notOverSeconds(g.Path, paths, seconds))
		case g.Word != "" && slices.Contains(paths, g.Path):
			bad(g, "%s is a number, and %q is not (accepted: a number, or a percentage for a ratio)", g.Path, g.Word)
		case g.Share == 0 && !slices.Contains(paths, g.Path):
			bad(g, "unknown path %q (%s)", g.Path, Accepted(g.Path, append(slices.Clone(paths), slices.Sorted(maps.Keys(words))...)))
		case g.Percent && !IsRatio(g.Path):
			bad(g, "a percentage compares ratios only, and %s is not one (ratios: the paths ending in _rate, _ratio or share)", g.Path)
		case vacuous(g) != "":
			bad(g, "%s", vacuousWhy(g))
		}
	}
	return errs
}

// ParseAll reads every gate of exprs, each problem a FieldError of field
// with the gate as written.
func ParseAll(exprs []string, field string) ([]Gate, herd.FieldErrors) {
	var gs []Gate
	var errs herd.FieldErrors
	for _, s := range exprs {
		g, err := parse(s)
		if err != nil {
			errs = append(errs, &herd.FieldError{Field: field, Elem: s, Msg: err.Error(), Err: err})
			continue
		}
		if i := slices.IndexFunc(gs, func(o Gate) bool { return Same(o, g) }); i >= 0 {
			errs = append(errs, &herd.FieldError{Field: field, Elem: s,
				Msg: fmt.Sprintf("the same gate as %q, given twice (accepted: each gate once)", gs[i].Expr)})
			continue
		}
		gs = append(gs, g)
	}
	return gs, errs
}

// Same says whether a and b decide the same thing, however written
// (spaces, 1% and 0.01).
func Same(a, b Gate) bool {
	a.Expr, b.Expr, a.Percent, b.Percent = "", "", false, false
	return a == b
}

// opChars are the characters of the operators.
const opChars = "<>=!"

// opHint is the operator a misread one was likely meant as.
func opHint(run string) string {
	if want, ok := map[string]string{"=>": ">=", "=<": "<=", "=": "==", "<>": "!=", "!": "!=", "===": "==", "=!": "!="}[run]; ok {
		return fmt.Sprintf(" (did you mean %s?)", want)
	}
	return ""
}
