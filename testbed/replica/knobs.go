package replica

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
)

// Knob is one setting of a replica's run-time config other than its
// strategy: a field of Config, or of a mitigation's struct, with a `json`
// tag (its name in PUT /admin/config, scenario files and results, all
// flat) and a `help` tag. The flags of `testbed up`, `testbed serve` and
// `stampede`, the scenario keys, the schema and the replicas' arguments
// are all made from a registry's Knobs, so a field added to Config or to a
// mitigation is a knob everywhere.
type Knob struct {
	Name       string   // the JSON name, such as query_cost
	Help       string   // one line, from the field's help tag
	Enum       []string // the accepted values, when they are a closed set
	Mitigation string   // the mitigation whose knob it is; "" for Config's own
	kind       string   // the flag's type: duration, float64, int, uint32, string or policy
	idx        []int    // the field in Config, or in the mitigation's struct
}

// Flag is the knob's flag: its name with dashes.
func (k Knob) Flag() string { return strings.ReplaceAll(k.Name, "_", "-") }

// Type is the knob's value type, as pflag names types: duration, float64,
// int, uint32, string, or policy (a retry policy's short form).
func (k Knob) Type() string { return k.kind }

// owner names where the knob is declared, for panics.
func (k Knob) owner() string {
	if k.Mitigation == "" {
		return "replica.Config"
	}
	return "mitigation " + k.Mitigation
}

// enums are the knobs whose values are a closed set.
var enums = map[string][]string{"write_strategy": WriteStrategies, "write_invalidate": WriteInvalidations, "abandoned_load": AbandonedLoads}

// Knobs lists every knob of the default registry's Config, in order.
func Knobs() []Knob { return defaultRegistry().Knobs() }

// Knobs lists every knob of r's Config: Config's own and every
// mitigation's, in wireOrder.
func (r *Mitigations) Knobs() []Knob { return slices.Clone(r.knobs) }

func (r *Mitigations) listKnobs() []Knob {
	var out []Knob
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && f.Tag.Get("json") != "strategy" {
			out = append(out, fieldKnob(f, ""))
		}
	}
	for _, n := range r.names {
		out = append(out, fieldKnobs(reflect.TypeOf(r.byName[n]), n)...)
	}
	rank := func(k Knob) int {
		if i := slices.Index(wireOrder, k.Name); i >= 0 {
			return i
		}
		return len(wireOrder)
	}
	slices.SortStableFunc(out, func(a, b Knob) int { return rank(a) - rank(b) })
	return out
}

// wireOrder is the order of the knobs when they were all Config's fields:
// results, the flags' help and the schema keep it. It never needs a new
// name: the knobs of a mitigation added since come after these, in
// registration order.
var wireOrder = []string{"ttl", "stale_ttl", "ttl_jitter", "xfetch_beta", "lock_ttl", "lock_wait", "lock_poll",
	"query_cost", "db_retry", "early_probability", "lease_interval", "lease_wait", "local_ttl", "local_jitter",
	"rate_limit", "rate_burst", "ramp_up", "breaker_failures", "breaker_open", "shed_min_limit", "shed_max_limit",
	"shed_initial_limit", "shed_wait", "write_strategy", "apply_rate", "write_batch", "coalesce_interval", "write_invalidate"}

// fieldKnobs are the knobs of mitigation name's struct t.
func fieldKnobs(t reflect.Type, name string) []Knob {
	out := make([]Knob, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, fieldKnob(t.Field(i), name))
	}
	return out
}

func fieldKnob(f reflect.StructField, mitigation string) Knob {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	help := f.Tag.Get("help")
	k := Knob{Name: name, Help: help, Enum: enums[name], Mitigation: mitigation, idx: f.Index}
	if name == "" || help == "" || !f.IsExported() {
		panic(fmt.Sprintf("%s: field %s needs to be exported, with a json and a help tag", k.owner(), f.Name))
	}
	k.kind = kindOf(f.Type, k)
	return k
}

func kindOf(t reflect.Type, k Knob) string {
	switch {
	case t == reflect.TypeFor[herd.Duration]():
		return "duration"
	case reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		return "policy"
	case t.Kind() == reflect.Float64, t.Kind() == reflect.Int, t.Kind() == reflect.Uint32, t.Kind() == reflect.String:
		return t.Kind().String()
	}
	panic(fmt.Sprintf("%s: knob %s of type %s has no flag form", k.owner(), k.Name, t))
}

// KnobNamed is the default registry's knob called name (its JSON name),
// if there is one.
func KnobNamed(name string) (Knob, bool) { return defaultRegistry().KnobNamed(name) }

// KnobNamed is r's knob called name (its JSON name), if there is one.
func (r *Mitigations) KnobNamed(name string) (Knob, bool) {
	i := slices.IndexFunc(r.knobs, func(k Knob) bool { return k.Name == name })
	if i < 0 {
		return Knob{}, false
	}
	return r.knobs[i], true
}

// KnobNames are the default registry's knobs' JSON names, in order.
func KnobNames() []string { return defaultRegistry().KnobNames() }

// KnobNames are r's knobs' JSON names, in order.
func (r *Mitigations) KnobNames() []string {
	names := make([]string, len(r.knobs))
	for i, k := range r.knobs {
		names[i] = k.Name
	}
	return names
}

// Value is k's field of c as a flag's value: String, Set and Type, pflag's
// Value, without this package knowing pflag.
func (k Knob) Value(c *Config) *KnobValue { return &KnobValue{k: k, c: c} }

// KnobValue is one knob of one Config, read and set in its flag form.
type KnobValue struct {
	k Knob
	c *Config
}

// field is the knob's field, and a commit that stores a change to it in
// the config: a mitigation's knobs are shared by copies of a Config, so
// a change replaces them.
func (v *KnobValue) field() (reflect.Value, func()) {
	if v.k.Mitigation == "" {
		return reflect.ValueOf(v.c).Elem().FieldByIndex(v.k.idx), func() {}
	}
	set := v.c.knobs()
	cur, ok := set.vals[v.k.Mitigation]
	if !ok {
		panic(fmt.Sprintf("replica: knob %s: the config has no mitigation %s", v.k.Name, v.k.Mitigation))
	}
	p := reflect.New(reflect.TypeOf(cur))
	p.Elem().Set(reflect.ValueOf(cur))
	return p.Elem().FieldByIndex(v.k.idx), func() { v.c.mit = set.with(p.Elem().Interface().(Mitigation)) }
}

// Type is the knob's type (Knob.Type).
func (v *KnobValue) Type() string { return v.k.kind }

// String is the value in the form Set reads.
func (v *KnobValue) String() string {
	f, _ := v.field()
	switch x := f.Addr().Interface().(type) {
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
	return fmt.Sprint(f.Interface())
}

// Set reads s in the knob's flag form. The value's range is Config's to
// check (Problems), with every other problem at once.
func (v *KnobValue) Set(s string) error {
	f, commit := v.field()
	defer commit()
	switch x := f.Addr().Interface().(type) {
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

// PatchOf is the patch that sets the knobs names (JSON names, "strategy"
// too) to their values in c. An unknown name panics: names come from the
// knobs.
func PatchOf(c Config, names ...string) admin.Patch {
	all := FullPatch(c)
	p := admin.Patch{}
	for _, n := range names {
		v, ok := all[n]
		if !ok {
			panic(fmt.Sprintf("replica.PatchOf: no knob %q", n))
		}
		p[n] = v
	}
	return p
}

// FullPatch sets every knob and the strategy to their values in c: a
// replica given it runs c whatever it was started with.
func FullPatch(c Config) admin.Patch { return herd.SettingsOf(c) }

// Patched is c with p's knobs set, as a replica started with c applies it.
func (c Config) Patched(p admin.Patch) (Config, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return c, err
	}
	if err := c.decode(b, true); err != nil {
		return c, fmt.Errorf("invalid config: %s", defaultRegistry().DescribeError(err))
	}
	return c, nil
}

// DescribeError names the field a decoding error is about, listing
// the fields of a Config of r's when the field is unknown.
func (r *Mitigations) DescribeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want %s, got %s", te.Field, te.Type, te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		fields := slices.Sorted(slices.Values(append(r.KnobNames(), "strategy")))
		return fmt.Sprintf("unknown field %s (accepted: %s)", f, strings.Join(fields, ", "))
	}
	return msg
}
