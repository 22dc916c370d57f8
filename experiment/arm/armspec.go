package arm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
)

// The one grammar of arms. An arm is written as --arms takes it: a
// strategy ("lock", "lock+ttl_jitter") applied to the base config, or
// KEY=VALUE of one of the arm kinds ("retry=full-jitter:100ms:2s:3",
// "edge-breaker=5:2s"), which keeps the base's strategy. A scenario file's
// arm is a name, maybe a strategy of its own, and settings whose keys are
// the same kinds' (or knobs). ArmKinds.Parse reads both.

// An ArmKind is one kind of KEY=VALUE arm: its key, as --arms and a
// scenario file's arm spell it, and what its value sets.
type ArmKind struct {
	Key     string // retry, throttle, hedge, client-breaker, edge-retry, ...
	Example string // a value, for help and errors; "" leaves the kind out of Examples
	Set     func(a *Arm, v string) error
	// Alone is what an arm that is only this kind must hold besides (a
	// hedge arm needs a delay); nil: nothing
	Alone func(a Arm) error
}

// ArmKinds are the kinds of KEY=VALUE arm one grammar reads, in the order
// help lists them: the clients' (ClientKinds), and those of a kind of
// subject, which it adds (the testbed's write and edge-* arms).
type ArmKinds []ArmKind

// ClientKinds are the kinds of arm every subject takes: the clients'
// policies, which herdbench's own clients apply.
var ClientKinds = ArmKinds{}.With(
	ArmKind{Key: "retry", Example: "full-jitter:100ms:2s:3", Set: func(a *Arm, v string) error { return herd.SetText(&a.Retry, v) }},
	ArmKind{Key: "retry-budget", Example: "10%", Set: func(a *Arm, v string) error { return herd.SetText(&a.Budget, v) }},
	ArmKind{Key: "throttle", Example: "2", Set: setThrottle},
	ArmKind{Key: "hedge", Example: "50ms", Set: func(a *Arm, v string) error { return herd.SetText(&a.Hedge, v) }, Alone: needsDelay},
	ArmKind{Key: "client-breaker", Example: "5:2s", Set: setClientBreaker},
)

// With is ks and more, in that order. It panics on a key twice.
func (ks ArmKinds) With(more ...ArmKind) ArmKinds {
	out := append(ArmKinds{}, ks...)
	for _, k := range more {
		if _, ok := out.kind(k.Key); ok {
			panic("experiment: arm kind " + k.Key + " twice")
		}
		out = append(out, k)
	}
	return out
}

// Examples are the kinds with an example each, KEY=EXAMPLE, for help text
// and errors.
func (ks ArmKinds) Examples() []string {
	var out []string
	for _, k := range ks {
		if k.Example != "" {
			out = append(out, k.Key+"="+k.Example)
		}
	}
	return out
}

// Keys are the keys of every kind.
func (ks ArmKinds) Keys() []string {
	keys := make([]string, len(ks))
	for i, k := range ks {
		keys[i] = k.Key
	}
	return keys
}

func (ks ArmKinds) kind(key string) (ArmKind, bool) {
	for _, k := range ks {
		if k.Key == key {
			return k, true
		}
	}
	return ArmKind{}, false
}

// ArmSpec is one arm as it is written: an element of --arms, or an arm of
// a scenario file.
type ArmSpec struct {
	Name string
	// Strategy is the replicas' strategy when the arm names one of its own
	// (a scenario file's strategy:); nil reads Name as --arms reads it
	Strategy *string
	Settings []ArmSetting // what the arm sets besides, in order
}

// ArmSetting is one key an arm sets, and where it is written.
type ArmSetting struct {
	Key   string // an arm kind's (retry, edge-breaker) or, given a KnobSetter, a knob's flag (ttl)
	Value string
	File  string // "" when not from a file
	Line  int
	Field string // where in File: arms[1].edge.breaker
}

// KnobSetter sets one of the replicas' knobs of an arm from a setting's
// key and value; the command line owns the knobs' flags.
type KnobSetter func(a *Arm, key, value string) error

// NameSpecs are specs of arms written as --arms writes them.
func NameSpecs(names []string) []ArmSpec {
	specs := make([]ArmSpec, len(names))
	for i, n := range names {
		specs[i] = ArmSpec{Name: n}
	}
	return specs
}

// Parse builds an arm per spec on base: its strategy, or its name read
// as --arms reads it, then its settings: an arm kind's, or a knob's
// through knob (nil: knobs are refused). Every problem is reported at once:
// a name's as field arms, element the name; a setting's at its file, line
// and field. An arm whose name does not read keeps base's config, and a
// strategy's problems are the plan's to report (Plan.Validate).
func (ks ArmKinds) Parse(specs []ArmSpec, base herd.Settings, knob KnobSetter) ([]Arm, herd.FieldErrors) {
	arms := make([]Arm, len(specs))
	var errs herd.FieldErrors
	for i, s := range specs {
		a := Arm{Name: s.Name, Knobs: base}
		if s.Strategy != nil {
			a.Knobs = base.With("strategy", *s.Strategy)
		} else if err := a.setName(ks); err != nil {
			errs = append(errs, &herd.FieldError{Field: "arms", Elem: s.Name, Msg: err.Error(), Err: err})
		}
		for _, st := range s.Settings {
			if err := a.set(ks, st.Key, st.Value, knob); err != nil {
				e := &herd.FieldError{File: st.File, Line: st.Line, Field: st.Field, Msg: err.Error(), Err: err}
				if e.Field == "" {
					e.Field, e.Elem, e.Msg = "arms", s.Name, st.Key+": "+e.Msg
				}
				errs = append(errs, e)
			}
		}
		arms[i] = a
	}
	return arms, errs
}

// Arms is Parse of names that are known to read (the library's tests,
// a caller that checked them): a name that does not read is an arm with
// base's config, and its problem is lost.
func (ks ArmKinds) Arms(names []string, base herd.Settings) []Arm {
	arms, _ := ks.Parse(NameSpecs(names), base, nil)
	return arms
}

// setName sets the arm from its name: parts joined with "+", each
// KEY=VALUE of an arm kind or a part of the strategy ("lock+ttl_jitter",
// "lock+write=queue", "write=coalesce").
func (a *Arm) setName(ks ArmKinds) error {
	var strategy []string
	var kinds []ArmKind
	for part := range strings.SplitSeq(a.Name, "+") {
		key, v, ok := strings.Cut(part, "=")
		if !ok {
			strategy = append(strategy, part)
			continue
		}
		k, ok := ks.kind(key)
		if !ok {
			return fmt.Errorf("unknown arm kind %q (accepted: a strategy, such as lock or lock+ttl_jitter, or KEY=VALUE, KEY one of %s, joined to a strategy with + if you like)",
				key, strings.Join(ks.Keys(), ", "))
		}
		if slices.ContainsFunc(kinds, func(o ArmKind) bool { return o.Key == key }) {
			return fmt.Errorf("%s twice: the second would replace the first (accepted: one %s=VALUE an arm; another arm to compare two)", key, key)
		}
		if err := k.Set(a, v); err != nil {
			return err
		}
		kinds = append(kinds, k)
	}
	if len(strategy) > 0 {
		a.Knobs = a.Knobs.With("strategy", strings.Join(strategy, "+"))
	}
	for _, k := range kinds {
		if k.Alone != nil {
			if err := k.Alone(*a); err != nil {
				return err
			}
		}
	}
	return nil
}

// set sets one of the arm's settings: an arm kind's, or a knob's.
func (a *Arm) set(ks ArmKinds, key, v string, knob KnobSetter) error {
	if k, ok := ks.kind(key); ok {
		return k.Set(a, v)
	}
	if knob == nil {
		return fmt.Errorf("unknown key %q (accepted: %s)", key, strings.Join(ks.Keys(), ", "))
	}
	return knob(a, key, v)
}

func setThrottle(a *Arm, v string) error {
	k, err := retry.ParseThrottle(v)
	if err == nil {
		a.Throttle = &k
	}
	return err
}

// setClientBreaker sets the clients' breaker; its errors say whose it is.
func setClientBreaker(a *Arm, v string) error {
	if err := herd.SetText(&a.Breaker, v); err != nil {
		return fmt.Errorf("client %w", err) // "client breaker "5": ..."
	}
	return nil
}

func needsDelay(a Arm) error {
	if a.Hedge == nil || a.Hedge.Delay == 0 {
		return errors.New("a hedge arm needs a delay, such as hedge=50ms")
	}
	return nil
}
