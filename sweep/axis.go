package sweep

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
)

// Unit is what an axis' values count.
type Unit string

const (
	// Milliseconds: a duration option, each value a whole number of ms
	Milliseconds Unit = "ms"
	// Count: clients, keys, requests per second
	Count Unit = "count"
)

// The axes besides the trigger's own options.
const (
	Rate    = "rate"     // the plan's requests per second
	HotKeys = "hot_keys" // the hot keys, which expire and flush invalidate and burst requests
)

// Axis is a magnitude swept over a range, From below To, both in Unit.
type Axis struct {
	Name string  `json:"name"`
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Unit Unit    `json:"unit"`
}

// GridAxis is a magnitude over a list of values, in Unit.
type GridAxis struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
	Unit   Unit      `json:"unit"`
}

// Magnitudes lists the names an axis may take on plan, each with its unit:
// the duration and whole-number options of its trigger, then rate and
// hot_keys.
func Magnitudes(plan plan.Plan) map[string]Unit {
	m := map[string]Unit{Rate: Count, HotKeys: Count}
	for _, o := range plan.TriggerSet().Options() {
		if o.Trigger != plan.Trigger {
			continue
		}
		switch o.Type() {
		case "duration":
			m[o.Key] = Milliseconds
		case "int":
			m[o.Key] = Count
		}
	}
	return m
}

// MagnitudeNames is Magnitudes' names, sorted, for help and errors.
func MagnitudeNames(plan plan.Plan) []string {
	return slices.Sorted(maps.Keys(Magnitudes(plan)))
}

// unitOf is the unit of the magnitude called name on plan, or an error
// for field listing the magnitudes it has.
func unitOf(plan plan.Plan, name, field, spec string) (Unit, *herd.FieldError) {
	u, ok := Magnitudes(plan)[name]
	if !ok {
		return "", &herd.FieldError{Field: field, Elem: spec, Msg: fmt.Sprintf("%q is not a magnitude of trigger %s (accepted: %s)",
			name, plan.Trigger, strings.Join(MagnitudeNames(plan), ", "))}
	}
	return u, nil
}

// ParseAxis reads NAME=FROM..TO for plan: 500ms..10s for a duration
// option, 10..1000 for a count; FROM must be under TO and above 0.
func ParseAxis(plan plan.Plan, spec string) (Axis, *herd.FieldError) {
	const form = "NAME=FROM..TO, such as slowdb_for=500ms..10s or burst=10..1000"
	bad := func(format string, args ...any) (Axis, *herd.FieldError) {
		return Axis{}, &herd.FieldError{Field: "vary", Elem: spec, Msg: fmt.Sprintf(format, args...)}
	}
	name, rng, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name) // as --grid reads its values: spaces around them are not a value's
	from, to, ok2 := strings.Cut(rng, "..")
	if !ok || !ok2 || name == "" {
		return bad("not a range (accepted: %s)", form)
	}
	u, err := unitOf(plan, name, "vary", spec)
	if err != nil {
		return Axis{}, err
	}
	a := Axis{Name: name, Unit: u}
	var e error
	if a.From, e = parseValue(from, u); e != nil {
		return bad("FROM: %v", e)
	}
	if a.To, e = parseValue(to, u); e != nil {
		return bad("TO: %v", e)
	}
	if a.From >= a.To {
		lo, hi := a.To, a.From // swapped
		if a.From == a.To {
			lo, hi = a.From, a.From*10
		}
		return bad("FROM %s is not below TO %s (accepted: FROM < TO, such as %s=%s..%s)", Format(a.From, u), Format(a.To, u), name, Format(lo, u), Format(hi, u))
	}
	return a, nil
}

// ParseGrid reads NAME=V1,V2,... for plan.
func ParseGrid(plan plan.Plan, spec string) (GridAxis, *herd.FieldError) {
	bad := func(format string, args ...any) (GridAxis, *herd.FieldError) {
		return GridAxis{}, &herd.FieldError{Field: "grid", Elem: spec, Msg: fmt.Sprintf(format, args...)}
	}
	name, list, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return bad("not an axis (accepted: NAME=V1,V2,..., such as burst=10,100,1000)")
	}
	u, err := unitOf(plan, name, "grid", spec)
	if err != nil {
		return GridAxis{}, err
	}
	g := GridAxis{Name: name, Unit: u}
	for i, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" && list != "" {
			return bad("value %d is empty (accepted: NAME=V1,V2,..., each value given once)", i+1)
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		v, e := parseValue(strings.TrimSpace(s), u)
		if e != nil {
			return bad("%v", e)
		}
		if slices.Contains(g.Values, v) {
			return bad("%s twice (accepted: each value once)", Format(v, u))
		}
		g.Values = append(g.Values, v)
	}
	if len(g.Values) == 0 {
		return bad("no values (accepted: one or more, NAME=V1,V2,...)")
	}
	slices.Sort(g.Values)
	return g, nil
}

// parseValue reads a positive value of unit u.
func parseValue(s string, u Unit) (float64, error) {
	if u == Milliseconds {
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Millisecond {
			return 0, fmt.Errorf("%q is not a duration of 1ms or more, such as 500ms or 10s", s)
		}
		return math.Round(float64(d) / float64(time.Millisecond)), nil
	}
	n, err := herd.ParseCount(s) // as a flag reads it: rate=100..1.5k
	if errors.Is(err, herd.ErrCountRange) {
		return 0, fmt.Errorf("%q out of range (accepted: a whole number of 1 or more, such as 100, 1k or 1.5k)", s)
	}
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a whole number of 1 or more, such as 100, 1k or 1.5k", s)
	}
	return float64(n), nil
}

// Format writes v in unit u as a flag takes it: 2.5s, 120.
func Format(v float64, u Unit) string {
	if u == Milliseconds {
		return (time.Duration(v) * time.Millisecond).String()
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Setting is one axis at one value.
type Setting struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  Unit    `json:"unit"`
	Text  string  `json:"text"` // Value in Unit as a flag writes it: 2.5s, 120
}

func setting(name string, v float64, u Unit) Setting {
	return Setting{Name: name, Value: v, Unit: u, Text: Format(v, u)}
}

// PlanAt is plan with arm alone and every setting applied: its triggers
// cloned, so plan is left as it was.
func PlanAt(plan plan.Plan, a arm.Arm, at []Setting) (plan.Plan, error) {
	p := plan
	p.Arms = []arm.Arm{a}
	p.Triggers = plan.TriggerSet().Clone()
	for _, s := range at {
		switch s.Name {
		case Rate:
			p.Rate = int(s.Value)
		case HotKeys:
			p.HotKeys = int(s.Value)
		default:
			if err := p.Triggers.Set(s.Name, s.Text); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}
