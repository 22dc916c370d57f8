package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/edge"
)

// The one grammar of arms. An arm is written as --arms takes it: a
// strategy ("lock", "lock+ttl_jitter") applied to the base config, or
// KEY=VALUE of one of the arm kinds ("retry=full-jitter:100ms:2s:3",
// "edge-breaker=5:2s"), which keeps the base's strategy. A scenario file's
// arm is a name, maybe a strategy of its own, and settings whose keys are
// the same kinds' (or knobs). ParseArms reads both.

// An ArmKind is one kind of KEY=VALUE arm: its key, as --arms and a
// scenario file's arm spell it, and what its value sets. A kind is one
// entry in armKinds.
type ArmKind struct {
	Key     string // retry, throttle, hedge, client-breaker, edge-retry, ...
	Example string // a value, for help and errors; "" leaves the kind out of ClientArms
	set     func(a *Arm, v string) error
	// alone is what an arm that is only this kind must hold besides (a
	// hedge arm needs a delay); nil: nothing
	alone func(a Arm) error
}

// armKinds is every kind of KEY=VALUE arm, in the order help lists them.
var armKinds = kindsOf(
	ArmKind{Key: "retry", Example: "full-jitter:100ms:2s:3", set: func(a *Arm, v string) error { return herd.SetText(&a.Retry, v) }},
	ArmKind{Key: "retry-budget", Example: "10%", set: func(a *Arm, v string) error { return herd.SetText(&a.Budget, v) }},
	ArmKind{Key: "throttle", Example: "2", set: setThrottle},
	ArmKind{Key: "hedge", Example: "50ms", set: func(a *Arm, v string) error { return herd.SetText(&a.Hedge, v) }, alone: needsDelay},
	ArmKind{Key: "client-breaker", Example: "5:2s", set: setClientBreaker},
	ArmKind{Key: "write", Example: "queue", set: setWrite},
)

// kindsOf is kinds, then one kind per key of the edges' policy
// (edge-timeout, edge-retry, edge-retry-budget, ...: edge.Keys), each
// setting that key of the arm's edge.Patch. It panics on a duplicate key.
func kindsOf(kinds ...ArmKind) []ArmKind {
	examples := map[string]string{"breaker": "5:2s"}
	for _, k := range edge.Keys {
		kinds = append(kinds, ArmKind{Key: "edge-" + strings.ReplaceAll(k, "_", "-"), Example: examples[k], set: func(a *Arm, v string) error {
			var p edge.Patch
			if err := a.Edge.Decode(&p); err != nil {
				return err
			}
			if err := p.Set(k, v); err != nil {
				return err
			}
			a.Edge = herd.SettingsOf(p)
			return nil
		}})
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.Key] {
			panic("experiment: arm kind " + k.Key + " twice")
		}
		seen[k.Key] = true
	}
	return kinds
}

// ClientArms lists the arm kinds with an example of each, for help text
// and errors.
var ClientArms = func() []string {
	var out []string
	for _, k := range armKinds {
		if k.Example != "" {
			out = append(out, k.Key+"="+k.Example)
		}
	}
	return out
}()

// ArmKeys are the keys of every arm kind.
func ArmKeys() []string {
	keys := make([]string, len(armKinds))
	for i, k := range armKinds {
		keys[i] = k.Key
	}
	return keys
}

func kindOf(key string) (ArmKind, bool) {
	for _, k := range armKinds {
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

// ParseArms builds an arm per spec on base: its strategy, or its name read
// as --arms reads it, then its settings: an arm kind's, or a knob's
// through knob (nil: knobs are refused). Every problem is reported at once:
// a name's as field arms, element the name; a setting's at its file, line
// and field. An arm whose name does not read keeps base's config, and a
// strategy's problems are the plan's to report (Plan.Validate).
func ParseArms(specs []ArmSpec, base api.Patch, knob KnobSetter) ([]Arm, herd.FieldErrors) {
	arms := make([]Arm, len(specs))
	var errs herd.FieldErrors
	for i, s := range specs {
		a := Arm{Name: s.Name, Knobs: base}
		if s.Strategy != nil {
			a.Knobs = base.With("strategy", *s.Strategy)
		} else if err := a.setName(); err != nil {
			errs = append(errs, &herd.FieldError{Field: "arms", Elem: s.Name, Msg: err.Error(), Err: err})
		}
		for _, st := range s.Settings {
			if err := a.set(st.Key, st.Value, knob); err != nil {
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

// Arms is ParseArms of names that are known to read (the library's tests,
// a caller that checked them): a name that does not read is an arm with
// base's config, and its problem is lost.
func Arms(names []string, base api.Patch) []Arm {
	arms, _ := ParseArms(NameSpecs(names), base, nil)
	return arms
}

// setName sets the arm from its name: parts joined with "+", each
// KEY=VALUE of an arm kind or a part of the strategy ("lock+ttl_jitter",
// "lock+write=queue", "write=coalesce").
func (a *Arm) setName() error {
	var strategy []string
	var kinds []ArmKind
	for part := range strings.SplitSeq(a.Name, "+") {
		key, v, ok := strings.Cut(part, "=")
		if !ok {
			strategy = append(strategy, part)
			continue
		}
		k, ok := kindOf(key)
		if !ok {
			return fmt.Errorf("unknown arm kind %q (accepted: a strategy, such as lock or lock+ttl_jitter, or KEY=VALUE, KEY one of %s, joined to a strategy with + if you like)",
				key, strings.Join(ArmKeys(), ", "))
		}
		if slices.ContainsFunc(kinds, func(o ArmKind) bool { return o.Key == key }) {
			return fmt.Errorf("%s twice: the second would replace the first (accepted: one %s=VALUE an arm; another arm to compare two)", key, key)
		}
		if err := k.set(a, v); err != nil {
			return err
		}
		kinds = append(kinds, k)
	}
	if len(strategy) > 0 {
		a.Knobs = a.Knobs.With("strategy", strings.Join(strategy, "+"))
	}
	for _, k := range kinds {
		if k.alone != nil {
			if err := k.alone(*a); err != nil {
				return err
			}
		}
	}
	return nil
}

// set sets one of the arm's settings: an arm kind's, or a knob's.
func (a *Arm) set(key, v string, knob KnobSetter) error {
	if k, ok := kindOf(key); ok {
		return k.set(a, v)
	}
	if knob == nil {
		return fmt.Errorf("unknown key %q (accepted: %s)", key, strings.Join(ArmKeys(), ", "))
	}
	return knob(a, key, v)
}

// setWrite sets the replicas' write strategy (write_strategy) in the arm.
func setWrite(a *Arm, v string) error {
	if !slices.Contains(api.WriteStrategies, v) {
		return fmt.Errorf("write strategy %q (accepted: %s)", v, strings.Join(api.WriteStrategies, ", "))
	}
	a.Knobs = a.Knobs.With("write_strategy", v)
	return nil
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
