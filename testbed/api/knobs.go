package api

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Knob is one setting of a replica's run-time config other than its
// strategy: a field of Config with a `json` tag (its name in PUT
// /admin/config, scenario files and results) and a `help` tag. The flags of
// `testbed up`, `testbed serve` and `stampede`, the scenario keys, the
// schema and the replicas' arguments are all made from Knobs, so a field
// added to Config is a knob everywhere.
type Knob struct {
	Name string   // the JSON name, such as query_cost
	Help string   // one line, from the field's help tag
	Enum []string // the accepted values, when they are a closed set
	kind string   // the flag's type: duration, float64, int, uint32, string or policy
	idx  []int    // the field in Config
}

// Flag is the knob's flag: its name with dashes.
func (k Knob) Flag() string { return strings.ReplaceAll(k.Name, "_", "-") }

// Type is the knob's value type, as pflag names types: duration, float64,
// int, uint32, string, or policy (a retry policy's short form).
func (k Knob) Type() string { return k.kind }

// enums are the knobs whose values are a closed set.
var enums = map[string][]string{"write_strategy": WriteStrategies, "write_invalidate": WriteInvalidations}

// Knobs lists every knob of Config, in field order.
func Knobs() []Knob { return slices.Clone(knobs()) }

var knobs = sync.OnceValue(func() []Knob {
	var out []Knob
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "strategy" {
			continue
		}
		help := f.Tag.Get("help")
		if name == "" || help == "" {
			panic(fmt.Sprintf("api.Config.%s needs a json and a help tag", f.Name))
		}
		out = append(out, Knob{Name: name, Help: help, Enum: enums[name], kind: kindOf(f.Type), idx: f.Index})
	}
	return out
})

func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[herd.Duration]():
		return "duration"
	case reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		return "policy"
	case t.Kind() == reflect.Float64, t.Kind() == reflect.Int, t.Kind() == reflect.Uint32, t.Kind() == reflect.String:
		return t.Kind().String()
	}
	panic(fmt.Sprintf("api.Config: a knob of type %s has no flag form", t))
}

// KnobNamed is the knob called name (its JSON name), if there is one.
func KnobNamed(name string) (Knob, bool) {
	i := slices.IndexFunc(knobs(), func(k Knob) bool { return k.Name == name })
	if i < 0 {
		return Knob{}, false
	}
	return knobs()[i], true
}

// KnobNames are the knobs' JSON names, in field order.
func KnobNames() []string {
	names := make([]string, len(knobs()))
	for i, k := range knobs() {
		names[i] = k.Name
	}
	return names
}

// Value is k's field of c as a flag's value: String, Set and Type, pflag's
// Value, without this package knowing pflag.
func (k Knob) Value(c *Config) *KnobValue {
	return &KnobValue{k: k, v: reflect.ValueOf(c).Elem().FieldByIndex(k.idx)}
}

// KnobValue is one knob of one Config, read and set in its flag form.
type KnobValue struct {
	k Knob
	v reflect.Value
}

// Type is the knob's type (Knob.Type).
func (v *KnobValue) Type() string { return v.k.kind }

// String is the value in the form Set reads.
func (v *KnobValue) String() string {
	switch x := v.v.Addr().Interface().(type) {
	case *herd.Duration:
		return x.String()
	case *float64:
		return strconv.FormatFloat(*x, 'g', -1, 64)
	case *int:
		return strconv.Itoa(*x)
	case *uint32:
		return strconv.FormatUint(uint64(*x), 10)
	case *string:
		return *x
	case encoding.TextMarshaler:
		b, _ := x.MarshalText()
		return string(b)
	}
	return fmt.Sprint(v.v.Interface())
}

// Set reads s in the knob's flag form. The value's range is Config's to
// check (Problems), with every other problem at once.
func (v *KnobValue) Set(s string) error {
	switch x := v.v.Addr().Interface().(type) {
	case *herd.Duration:
		d, err := time.ParseDuration(s)
		*x = herd.Duration(d)
		return err
	case *float64:
		f, err := strconv.ParseFloat(s, 64)
		*x = f
		return err
	case *int:
		n, err := strconv.Atoi(s)
		*x = n
		return err
	case *uint32:
		n, err := strconv.ParseUint(s, 10, 32)
		*x = uint32(n)
		return err
	case *string:
		*x = s
		return nil
	case encoding.TextUnmarshaler:
		return x.UnmarshalText([]byte(s))
	}
	return fmt.Errorf("%s: no flag form", v.k.Name)
}

// Patch is what an arm sets of the replicas' run-time config: the knobs it
// names (and the strategy), each by its JSON name. PUT /admin/config reads
// a patch over the config the replica was started with, so whatever an
// arm does not name stays as the testbed was started.
type Patch map[string]json.RawMessage

// PatchOf is the patch that sets the knobs names (JSON names, "strategy"
// too) to their values in c. An unknown name panics: names come from the
// knobs.
func PatchOf(c Config, names ...string) Patch {
	all := fullPatch(c)
	p := Patch{}
	for _, n := range names {
		v, ok := all[n]
		if !ok {
			panic(fmt.Sprintf("api.PatchOf: no knob %q", n))
		}
		p[n] = v
	}
	return p
}

// FullPatch sets every knob and the strategy to their values in c: a
// replica given it runs c whatever it was started with.
func FullPatch(c Config) Patch { return fullPatch(c) }

func fullPatch(c Config) Patch {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // every field marshals
	}
	var p Patch
	_ = json.Unmarshal(b, &p)
	return p
}

// With is a copy of p that also sets name to v's JSON form.
func (p Patch) With(name string, v any) Patch {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	q := maps.Clone(p)
	if q == nil {
		q = Patch{}
	}
	q[name] = b
	return q
}

// Merge is a copy of p with every knob q sets set as q sets it.
func (p Patch) Merge(q Patch) Patch {
	out := maps.Clone(p)
	if out == nil {
		out = Patch{}
	}
	maps.Copy(out, q)
	return out
}

// Strategy is the strategy p sets, "" when it sets none.
func (p Patch) Strategy() string {
	var s string
	_ = json.Unmarshal(p["strategy"], &s)
	return s
}

// Sets reports whether p sets the knob name.
func (p Patch) Sets(name string) bool {
	_, ok := p[name]
	return ok
}

// Names are the knobs p sets, sorted.
func (p Patch) Names() []string { return slices.Sorted(maps.Keys(p)) }

// Apply is c with p's knobs set, as a replica started with c applies it.
func (p Patch) Apply(c Config) (Config, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return c, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("invalid config: %s", describeJSONError(err))
	}
	return c, nil
}
