package triggers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/herd"
)

// Default returns every trigger herdbench has, each with its default
// options. Adding a trigger is its file and one line here.
func Default() *Registry {
	return NewRegistry(
		&Expire{},
		&TTL{},
		&Flush{},
		&Conndrop{},
		NewOutage(),
		NewSlowDB(),
		NewBurst(),
		NewRestart(),
		&Notify{},
		NewWrites(),
		NewCommand(),
	)
}

// Registry holds triggers by name, configured: the plan's triggers with
// their options set from flags, a scenario file or saved results.
type Registry struct {
	byName  map[string]Trigger
	names   []string
	options []Option
}

// NewRegistry returns a registry of ts, each a pointer to its struct so its
// options can be set; a duplicate name or option key panics.
func NewRegistry(ts ...Trigger) *Registry {
	r := &Registry{byName: map[string]Trigger{}}
	keys := map[string]string{}
	for _, t := range ts {
		if _, dup := r.byName[t.Name()]; dup {
			panic("triggers: duplicate name " + t.Name())
		}
		r.byName[t.Name()] = t
		r.names = append(r.names, t.Name())
		for _, o := range optionsOf(t) {
			if other, dup := keys[o.Key]; dup {
				panic(fmt.Sprintf("triggers: option %s of %s is also %s's", o.Key, t.Name(), other))
			}
			keys[o.Key] = t.Name()
			r.options = append(r.options, o)
		}
	}
	return r
}

// Names lists the registered names in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Get returns the trigger called name, or an error listing the valid names.
func (r *Registry) Get(name string) (Trigger, error) {
	if t, ok := r.byName[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown trigger %q (accepted: %s)", name, strings.Join(r.names, ", "))
}

// Triggers lists the registered triggers in registration order, to build
// a registry with one more (NewRegistry(append(Default().Triggers(), t)...)).
func (r *Registry) Triggers() []Trigger {
	out := make([]Trigger, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}

// Options lists every trigger's options, in registration order.
func (r *Registry) Options() []Option { return slices.Clone(r.options) }

// Set sets the option called key from its text, as a flag would.
func (r *Registry) Set(key, value string) error {
	for _, o := range r.options {
		if o.Key == key {
			return o.Set(value)
		}
	}
	return fmt.Errorf("unknown trigger option %q", key)
}

// Clone is a registry of copies of r's triggers, with the same options.
func (r *Registry) Clone() *Registry {
	ts := make([]Trigger, len(r.names))
	for i, n := range r.names {
		v := reflect.ValueOf(r.byName[n])
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(v.Elem())
		ts[i] = c.Interface().(Trigger)
	}
	return NewRegistry(ts...)
}

// Validate checks every trigger's options, all at once: values of a
// closed set against it, and each trigger's own checks.
func (r *Registry) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	for _, o := range r.options {
		if v := o.String(); o.Enum != nil && !slices.Contains(o.Enum, v) && (o.Pattern == "" || !regexp.MustCompile(o.Pattern).MatchString(v)) {
			errs.Add(o.Key, "unknown %q (accepted: %s)", v, strings.Join(o.Enum, ", "))
		}
	}
	for _, n := range r.names {
		if v, ok := r.byName[n].(interface{ Validate() herd.FieldErrors }); ok {
			errs = append(errs, v.Validate()...)
		}
	}
	return errs
}

// MarshalJSON writes every option as one flat object, key by key: the
// results' plan.trigger_options.
func (r *Registry) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, o := range r.options {
		if o.omitEmpty && o.field.IsZero() {
			continue // an option added since results were written: left out unset, they read back as written
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		v, err := json.Marshal(o.field.Interface())
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(o.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote over the defaults: an option
// left out keeps its default, a key no trigger has is ignored (results of
// another version read back).
func (r *Registry) UnmarshalJSON(b []byte) error {
	if r.byName == nil {
		*r = *Default()
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, o := range r.options {
		if raw, ok := m[o.Key]; ok {
			if err := json.Unmarshal(raw, o.field.Addr().Interface()); err != nil {
				return fmt.Errorf("trigger_options.%s: %w", o.Key, err)
			}
		}
	}
	return nil
}
