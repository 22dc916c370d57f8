package triggers

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Option is one option of a trigger: an exported field of the trigger's
// struct with a json tag (its key in scenario files and results) and a
// help tag. It reads and sets the field as text, so it serves as a flag's
// value (String, Set, Type: pflag's Value) without this package knowing
// flags.
type Option struct {
	Trigger string   // the trigger it configures
	Key     string   // slowdb_latency: the scenario key and the results field
	Help    string   // what it sets, for the flag's help and the schema
	Enum    []string // the accepted values of a closed set; nil for any value of its type
	// Pattern, when set, is what a value must match instead of being one
	// of Enum, which then lists its forms (api-N)
	Pattern   string
	omitEmpty bool // its json tag says omitempty: left out of the JSON when unset
	field     reflect.Value
}

// Enum is implemented by the types of options whose values form a closed
// set.
type Enum interface{ Accepted() []string }

// Dependency is a dependency the testbed reaches through a proxy.
type Dependency string

// Accepted lists the dependencies.
func (Dependency) Accepted() []string { return herd.Dependencies }

// Part is a part of the testbed a restart can name.
type Part string

// Accepted lists the parts: each of herd.Parts, and one replica, api-N.
func (Part) Accepted() []string { return append(slices.Clone(herd.Parts), herd.ReplicaForm) }

// Pattern is what a part matches: one of herd.Parts, or one replica.
func (Part) Pattern() string { return herd.PartPattern }

// optionsOf reads the options of t, a pointer to a struct, from its
// fields' tags.
func optionsOf(t Trigger) []Option {
	v := reflect.ValueOf(t)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("triggers: %s is registered as %T; want a pointer to its struct", t.Name(), t))
	}
	v = v.Elem()
	var out []Option
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || key == "" || key == "-" {
			continue
		}
		o := Option{Trigger: t.Name(), Key: key, Help: f.Tag.Get("help"), field: v.Field(i), omitEmpty: opts == "omitempty"}
		if e, ok := v.Field(i).Interface().(Enum); ok {
			o.Enum = e.Accepted()
		}
		if pt, ok := v.Field(i).Interface().(interface{ Pattern() string }); ok {
			o.Pattern = pt.Pattern()
		}
		if o.Type() == "" {
			panic(fmt.Sprintf("triggers: option %s of %s has type %s (accepted: herd.Duration, int, bool, string kinds)", key, t.Name(), f.Type))
		}
		out = append(out, o)
	}
	return out
}

// Flag is the option's flag: its key with dashes, --slowdb-latency.
func (o Option) Flag() string { return strings.ReplaceAll(o.Key, "_", "-") }

// Type names the option's type as flags do: duration, int, bool or string.
func (o Option) Type() string {
	switch {
	case o.field.Type() == reflect.TypeFor[herd.Duration]():
		return "duration"
	case o.field.Kind() == reflect.Int:
		return "int"
	case o.field.Kind() == reflect.Bool:
		return "bool"
	case o.field.Kind() == reflect.String:
		return "string"
	}
	return ""
}

// String is the option's value as text.
func (o Option) String() string {
	if !o.field.IsValid() {
		return ""
	}
	switch o.Type() {
	case "duration":
		return time.Duration(o.field.Int()).String()
	case "int":
		return strconv.FormatInt(o.field.Int(), 10)
	case "bool":
		return strconv.FormatBool(o.field.Bool())
	}
	return o.field.String()
}

// Set sets the option from text: "2s", "1000", "true", "redis". A value of
// a closed set is checked with the other options, by Registry.Validate.
func (o Option) Set(s string) error {
	switch o.Type() {
	case "duration":
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 500ms, 2s or 1m30s", s)
		}
		o.field.SetInt(int64(d))
	case "int":
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		o.field.SetInt(int64(n))
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		o.field.SetBool(b)
	default:
		o.field.SetString(s)
	}
	return nil
}
