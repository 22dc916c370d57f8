package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
)

// Gate is a pass/fail rule on a tipping point, "[ARM:]tipping OP VALUE":
// VALUE is a magnitude in the axis' unit (2s, 120) or none, which takes
// == and != only.
type Gate struct {
	Expr  string  `json:"expr"`
	Arm   string  `json:"arm,omitempty"` // "": every arm
	Op    string  `json:"op"`
	Value float64 `json:"value"`          // in the axis' unit
	None  bool    `json:"none,omitempty"` // VALUE was none
}

// GateResult is a gate checked on one arm.
type GateResult struct {
	Gate     string `json:"gate"`
	Arm      string `json:"arm"`
	Measured string `json:"measured"` // the arm's tipping point, as the table shows it
	Passed   bool   `json:"passed"`
}

const gateForm = "[ARM:]tipping OP VALUE, such as none:tipping >= 2s or lock:tipping == none"

// ParseGates reads every gate for ax and the swept arms: every problem at
// once, each naming the gate and the accepted values.
func ParseGates(exprs []string, ax *Axis, arms []string) ([]Gate, herd.FieldErrors) {
	var gs []Gate
	var errs herd.FieldErrors
	for _, e := range exprs {
		g, err := parseGate(e, ax, arms)
		if err != nil {
			errs = append(errs, &herd.FieldError{Field: "gate", Elem: e, Msg: err.Error()})
			continue
		}
		gs = append(gs, g)
	}
	return gs, errs
}

func parseGate(expr string, ax *Axis, arms []string) (Gate, error) {
	if g, err := gates.Parse(expr); err == nil && g.Share > 0 {
		return Gate{}, fmt.Errorf("a gate over seconds judges one run's timeline, and a sweep's gates judge each arm's tipping point over its runs (accepted: %s; a gate over seconds on stampede, run or report)", gateForm)
	}
	if ax == nil {
		return Gate{}, fmt.Errorf("a gate on the tipping point needs --vary (a grid has none)")
	}
	ops := strings.Join(gates.Ops, " ")
	at, op := gates.FindOp(expr)
	if at < 0 {
		return Gate{}, fmt.Errorf("no operator (accepted: %s; OP one of %s)", gateForm, ops)
	}
	g := Gate{Expr: strings.TrimSpace(expr), Op: op}
	left, right := strings.TrimSpace(expr[:at]), strings.TrimSpace(expr[at+len(op):])
	path := left
	if i := strings.LastIndex(left, ":"); i >= 0 {
		g.Arm, path = strings.TrimSpace(left[:i]), strings.TrimSpace(left[i+1:])
		if !slices.Contains(arms, g.Arm) {
			return Gate{}, fmt.Errorf("arm %q is not swept (accepted: %s)", g.Arm, strings.Join(arms, ", "))
		}
	}
	if path != "tipping" {
		return Gate{}, fmt.Errorf("%q is not a sweep's figure (accepted: tipping, as %s)", path, gateForm)
	}
	if right == TipNone {
		if op != "==" && op != "!=" {
			return Gate{}, fmt.Errorf("none compares with == or != only")
		}
		g.None = true
		return g, nil
	}
	v, err := parseValue(right, ax.Unit)
	if err != nil {
		return Gate{}, fmt.Errorf("%v (accepted: none, or a magnitude of %s in its unit)", err, ax.Name)
	}
	g.Value = v
	return g, nil
}

// CheckGates checks every gate on every arm it names.
func CheckGates(gs []Gate, arms []ArmSweep) []GateResult {
	out := []GateResult{}
	for _, g := range gs {
		for _, a := range arms {
			if g.Arm != "" && g.Arm != a.Name || a.Tipping == nil {
				continue
			}
			out = append(out, GateResult{Gate: g.Expr, Arm: a.Name, Measured: a.Tipping.Text, Passed: g.Holds(*a.Tipping, a.Bracket)})
		}
	}
	return out
}

// Holds says whether the gate holds for a tipping point. What is known of
// it is an interval: found, its value; none, above the bracket's largest
// survived (TO); below, at most its smallest tipped (FROM); unknown,
// nothing. A gate holds when it holds for every value of the interval, so
// an unknown tipping point fails every gate.
func (g Gate) Holds(t Tipping, b *Bracket) bool {
	if g.None {
		if t.State == TipUnknown {
			return false
		}
		return (t.State == TipNone) == (g.Op == "==")
	}
	var lo, hi float64
	var loOpen, hiOpen bool
	switch {
	case t.State == TipFound && t.Value != nil:
		lo, hi = *t.Value, *t.Value
	case t.State == TipNone && b != nil && b.Survived != nil:
		lo, hi, loOpen, hiOpen = *b.Survived, math.Inf(1), true, true
	case t.State == TipBelow && t.Value != nil:
		lo, hi, loOpen = 0, *t.Value, true
	default:
		return false
	}
	v := g.Value
	switch g.Op {
	case ">=":
		return lo >= v
	case ">":
		return lo > v || lo == v && loOpen
	case "<=":
		return hi <= v
	case "<":
		return hi < v || hi == v && hiOpen
	case "==":
		return lo == v && hi == v
	case "!=":
		return v < lo || v > hi || v == lo && loOpen || v == hi && hiOpen
	}
	return false
}

// Failed counts the gates that did not pass.
func Failed(rs []GateResult) int {
	n := 0
	for _, r := range rs {
		if !r.Passed {
			n++
		}
	}
	return n
}
