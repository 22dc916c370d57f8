package replica

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/herdbench/herdbench/herd"
)

// Mitigations is a registry of mitigations by name: which strategies a
// replica accepts, which combinations are valid, and the knobs of each.
type Mitigations struct {
	byName map[string]Mitigation
	names  []string
	knobs  []Knob // Config's own and every mitigation's, in Config's order
	zero   *knobSet
	deflt  *knobSet
}

// NewMitigations returns a registry of ms, each a struct value: its
// knobs' defaults (and, for a mitigation the server does not know, its
// hooks, with value receivers). A duplicate name or
// knob panics, as does a knob without a json and a help tag.
func NewMitigations(ms ...Mitigation) *Mitigations {
	r := &Mitigations{byName: map[string]Mitigation{}}
	zero, deflt := map[string]Mitigation{}, map[string]Mitigation{}
	for _, m := range ms {
		t := reflect.TypeOf(m)
		if t.Kind() != reflect.Struct {
			panic(fmt.Sprintf("replica: mitigation %s is a %s; register its struct value", m.Name(), t))
		}
		if _, dup := r.byName[m.Name()]; dup {
			panic("replica: duplicate mitigation " + m.Name())
		}
		r.byName[m.Name()] = m
		r.names = append(r.names, m.Name())
		zero[m.Name()] = reflect.Zero(t).Interface().(Mitigation)
		deflt[m.Name()] = m
	}
	r.zero = &knobSet{reg: r, vals: zero}
	r.deflt = &knobSet{reg: r, vals: deflt}
	r.knobs = r.listKnobs()
	seen := map[string]string{}
	for _, k := range r.knobs {
		if other, dup := seen[k.Name]; dup {
			panic(fmt.Sprintf("replica: knob %s of %s is also %s's", k.Name, k.owner(), other))
		}
		seen[k.Name] = k.owner()
	}
	return r
}

// defaultRegistry is DefaultMitigations, made once: the registry of
// the package's functions (Knobs, Strategies) and of a zero Config.
var defaultRegistry = sync.OnceValue(DefaultMitigations)

// Names lists the mitigations' names in registration order.
func (r *Mitigations) Names() []string { return slices.Clone(r.names) }

// Mitigations lists the registered mitigations, with their default
// knobs, in registration order: to build a registry with one more
// (NewMitigations(append(DefaultMitigations().Mitigations(), m)...)).
func (r *Mitigations) Mitigations() []Mitigation {
	out := make([]Mitigation, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}

// Get is the mitigation called name, with its default knobs.
func (r *Mitigations) Get(name string) (Mitigation, bool) {
	m, ok := r.byName[name]
	return m, ok
}

// OfKind lists the names of the mitigations of kind, in registration
// order.
func (r *Mitigations) OfKind(kind string) []string {
	var out []string
	for _, n := range r.names {
		if r.byName[n].Kind() == kind {
			out = append(out, n)
		}
	}
	return out
}

// DefaultConfig is the replicas' default config with every knob of r's
// mitigations at its default.
func (r *Mitigations) DefaultConfig() Config {
	c := baseDefaults
	c.mit = r.deflt
	return c
}

// ErrUnknownStrategy is the cause of a strategy's FieldError when one of
// its parts is no strategy at all.
var ErrUnknownStrategy = errors.New("unknown strategy")

// Parse checks strategy s, one name or several joined with "+": every
// part a mitigation of r, none only alone, at most one of each Exclusive
// group. It returns the parts in registration order.
func (r *Mitigations) Parse(s string) ([]string, *herd.FieldError) {
	accepted := fmt.Sprintf("accepted: %s, or several joined with +, such as lock+ttl_jitter", strings.Join(r.names, ", "))
	bad := func(format string, args ...any) ([]string, *herd.FieldError) {
		return nil, herd.Errorf("strategy", format, args...)
	}
	if s == "" {
		return bad("empty (%s)", accepted)
	}
	parts := strings.Split(s, "+")
	groups := map[string]string{} // group: the part of it seen
	for _, p := range parts {
		m, ok := r.byName[p]
		if !ok {
			e := herd.Errorf("strategy", "unknown %q (%s)", p, accepted)
			e.Err = ErrUnknownStrategy
			return nil, e
		}
		if m.Kind() == KindNone && len(parts) > 1 {
			return bad("%q: %s cannot be combined with other strategies", s, p)
		}
		x, ok := m.(Exclusive)
		if !ok {
			continue
		}
		g := x.ExclusiveGroup()
		if prev, dup := groups[g]; dup {
			members := r.group(g)
			if len(members) == 2 {
				return bad("%q combines %s and %s; use one of them", s, prev, p)
			}
			return bad("%q combines %s and %s; at most one of %s may be used", s, prev, p, strings.Join(members, ", "))
		}
		groups[g] = p
	}
	return slices.DeleteFunc(slices.Clone(r.names), func(n string) bool { return !slices.Contains(parts, n) }), nil
}

// group lists the mitigations of Exclusive group g.
func (r *Mitigations) group(g string) []string {
	var out []string
	for _, n := range r.names {
		if x, ok := r.byName[n].(Exclusive); ok && x.ExclusiveGroup() == g {
			out = append(out, n)
		}
	}
	return out
}

// knobSet is a config's mitigation knobs: every mitigation of reg,
// configured. It is never changed once made, so copies of a Config share
// it; a change makes a new one.
type knobSet struct {
	reg  *Mitigations
	vals map[string]Mitigation
}

// with is s with m's knobs replaced.
func (s *knobSet) with(m Mitigation) *knobSet {
	vals := make(map[string]Mitigation, len(s.vals))
	for k, v := range s.vals {
		vals[k] = v
	}
	vals[m.Name()] = m
	return &knobSet{reg: s.reg, vals: vals}
}

// Rebase is c with its mitigation knobs read as r's: the value of each of
// r's mitigations c's registry has too, r's default for the others. A
// config of the default registry's is how a replica with another registry
// is usually given its Config.
func (r *Mitigations) Rebase(c Config) Config {
	from := c.knobs()
	if from.reg == r {
		return c
	}
	vals := make(map[string]Mitigation, len(r.names))
	for _, n := range r.names {
		vals[n] = r.byName[n]
		if m, ok := from.vals[n]; ok && reflect.TypeOf(m) == reflect.TypeOf(vals[n]) {
			vals[n] = m
		}
	}
	c.mit = &knobSet{reg: r, vals: vals}
	return c
}
