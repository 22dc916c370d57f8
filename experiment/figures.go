package experiment

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Figure is one number of an arm's results, named by its path in them
// (db.queries, requests.checkout.p99_ms, trigger.detail.lost: the JSON
// names, a map's keys, an inlined struct's fields at its parent's path),
// read and written on the Go value it was found in. Gates read figures,
// repeats take their medians, and the results contract's table
// (contract.go) names each one's source and window.
//
// The figures of a value are the numbers its results print: a field
// omitempty leaves out when it is zero or nil is none, a nil pointer the
// results print as null is a figure without a value, and a slice's
// elements are none (the timeline is no gate's business).
type Figure struct {
	Path  string
	Whole bool // an integer in its Go type, a count: a median of it rounds half up
	get   func() *float64
	set   func(*float64)
}

// Value is the figure's number; nil when the results print it as null.
func (f Figure) Value() *float64 { return f.get() }

// Set writes v into the value the figure was found in (nil: null, or 0
// where the results cannot print null).
func (f Figure) Set(v *float64) { f.set(v) }

// Figures are the figures of a by path: what a gate reads.
func (a ArmResult) Figures() map[string]*float64 {
	return figureValues(&a)
}

// figureValues are the figures of *v by path.
func figureValues(v any) map[string]*float64 {
	out := map[string]*float64{}
	for _, f := range figuresOf(v) {
		out[f.Path] = f.Value()
	}
	return out
}

// figuresOf are the figures of *v, settable through it, sorted by path.
func figuresOf(v any) []Figure {
	w := &figureWalk{}
	w.walk(reflect.ValueOf(v).Elem(), "", false, nil)
	slices.SortFunc(w.out, func(a, b Figure) int { return strings.Compare(a.Path, b.Path) })
	return w.out
}

// figurePaths are the paths of every number v's type may hold, sorted:
// nil pointers as if set, fields omitempty leaves out too; a map's keys
// are its values' (none, when it is empty), an interface's the concrete
// value v holds. What a gate may name.
func figurePaths(v any) []string {
	w := &figureWalk{schema: true}
	w.walk(reflect.ValueOf(v), "", false, nil)
	paths := make([]string, 0, len(w.out))
	for _, f := range w.out {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// figureWalk finds the figures under a value. Where a value cannot be set
// in place (a map's element, a struct held in an interface) it walks an
// addressable copy, and save writes the copy back after each Set.
type figureWalk struct {
	schema bool // every number the types hold (figurePaths), not only those the results print
	out    []Figure
}

var (
	rawType    = reflect.TypeFor[json.RawMessage]()
	numberType = reflect.TypeFor[json.Number]()
	jsonType   = reflect.TypeFor[json.Marshaler]()
	textType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// walk adds the figures of v, at path; omit: its field is omitempty.
func (w *figureWalk) walk(v reflect.Value, path string, omit bool, save func()) {
	t := v.Type()
	if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
		w.indirect(v, path, omit, save) // null, whatever it would point to
		return
	}
	switch {
	case t == rawType:
		w.raw(v, path, save)
		return
	case t == numberType: // a JSON number held as its text, set as its shortest text
		w.add(path, false, v, func(x *float64) {
			v.SetString("")
			if x != nil {
				v.SetString(strconv.FormatFloat(*x, 'g', -1, 64))
			}
		}, save)
		return
	case t.Implements(jsonType) || t.Implements(textType) || reflect.PointerTo(t).Implements(jsonType) || reflect.PointerTo(t).Implements(textType):
		return // a word of its own (a duration, a policy, a time)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		w.indirect(v, path, omit, save)
	case reflect.Struct:
		w.fields(v, path, save)
	case reflect.Map:
		w.entries(v, path, save)
	case reflect.Slice: // its elements are no figures; a nil one prints as null
		if v.IsNil() && !omit && !w.schema {
			w.null(v, path, save)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if omit && v.IsZero() && !w.schema {
			return
		}
		w.number(v, path, save)
	}
}

// indirect adds the figures behind a pointer or an interface: none when
// it is nil and omitempty, a figure without a value when it is nil (the
// results' null), else its value's.
func (w *figureWalk) indirect(v reflect.Value, path string, omit bool, save func()) {
	if v.IsNil() {
		switch {
		case w.schema && v.Kind() == reflect.Pointer:
			w.walk(reflect.New(v.Type().Elem()).Elem(), path, false, nil)
		case w.schema || omit:
		default:
			w.null(v, path, save)
		}
		return
	}
	e := v.Elem()
	switch {
	case v.Kind() == reflect.Pointer:
		if isNumber(e.Kind()) { // written as a new pointer: the one held may be shared
			w.add(path, isWhole(e.Kind()), e, func(x *float64) { v.Set(newNumber(v.Type(), x)) }, save)
			return
		}
		w.walk(e, path, false, save) // what a pointer points to is set in place
	case isNumber(e.Kind()) || e.Type() == numberType: // a number in a JSON value: set as the float64 it reads as
		w.add(path, isWhole(e.Kind()), e, func(x *float64) { v.Set(jsonValue(v.Type(), x)) }, save)
	case e.Kind() == reflect.Pointer || e.Kind() == reflect.Map:
		w.walk(e, path, false, save)
	default:
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		w.walk(c, path, false, func() { v.Set(c); call(save) })
	}
}

// null is a nil pointer, interface or slice the results print as null: a
// figure without a value, which a number is written into when it can
// hold one.
func (w *figureWalk) null(v reflect.Value, path string, save func()) {
	var whole bool
	set := func(x *float64) {
		if x == nil {
			v.Set(reflect.Zero(v.Type()))
		}
	}
	switch {
	case v.Kind() == reflect.Interface:
		set = func(x *float64) { v.Set(jsonValue(v.Type(), x)) }
	case isNumber(v.Type().Elem().Kind()):
		whole = isWhole(v.Type().Elem().Kind())
		set = func(x *float64) { v.Set(newNumber(v.Type(), x)) }
	}
	w.out = append(w.out, Figure{Path: path, Whole: whole, get: func() *float64 { return nil },
		set: func(x *float64) { set(x); call(save) }})
}

// fields adds the figures of a struct's fields as encoding/json names
// them: the json tag's name, the field's name without one; an embedded
// struct without a tag inlined; a field tagged "-", unexported or
// written as a string (",string") none.
func (w *figureWalk) fields(v reflect.Value, path string, save func()) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case !f.IsExported() || name == "-" || hasOpt(opts, "string"):
		case f.Anonymous && name == "" && embedsStruct(v.Field(i)):
			if v.Field(i).Kind() == reflect.Pointer && v.Field(i).IsNil() && !w.schema {
				continue // encoding/json leaves a nil embedded struct out
			}
			w.walk(v.Field(i), path, false, save)
		default:
			if !hasTag || name == "" {
				name = f.Name
			}
			w.walk(v.Field(i), join(path, name), hasOpt(opts, "omitempty"), save)
		}
	}
}

// entries adds the figures of a map of string keys, each at its key;
// each element is walked as a copy, written back when one of its figures
// is set.
func (w *figureWalk) entries(v reflect.Value, path string, save func()) {
	if v.Type().Key().Kind() != reflect.String {
		return
	}
	iter := v.MapRange()
	for iter.Next() {
		k := iter.Key()
		c := reflect.New(v.Type().Elem()).Elem()
		c.Set(iter.Value())
		w.walk(c, join(path, k.String()), false, func() { v.SetMapIndex(k, c); call(save) })
	}
}

// raw adds the figures of a JSON value held as its text (an arm's
// config, its subject's own): read from its decoding, and set in it, the
// text then encoded again (its keys sorted, as encoding/json writes a
// map).
func (w *figureWalk) raw(v reflect.Value, path string, save func()) {
	if v.Len() == 0 {
		return
	}
	if w.schema {
		return // what a subject's config holds is the subject's
	}
	dec := json.NewDecoder(bytes.NewReader(v.Bytes()))
	dec.UseNumber() // what is not set stays exactly as it was
	var tree any
	if dec.Decode(&tree) != nil {
		return
	}
	holder := reflect.New(reflect.TypeFor[any]()).Elem()
	holder.Set(reflect.ValueOf(tree))
	w.walk(holder, path, false, func() {
		b, err := json.Marshal(holder.Interface())
		if err == nil {
			v.SetBytes(b)
		}
		call(save)
	})
}

// number adds v, a number, as a figure.
func (w *figureWalk) number(v reflect.Value, path string, save func()) {
	w.add(path, isWhole(v.Kind()), v, func(x *float64) {
		if x == nil {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		setNumber(v, *x)
	}, save)
}

// add appends the figure at path whose value is v's, set by set.
func (w *figureWalk) add(path string, whole bool, v reflect.Value, set func(*float64), save func()) {
	w.out = append(w.out, Figure{Path: path, Whole: whole && v.Type() != numberType,
		get: func() *float64 { return numberOf(v) },
		set: func(x *float64) { set(x); call(save) }})
}

// numberOf is v's number as a float64.
func numberOf(v reflect.Value) *float64 {
	var x float64
	switch {
	case v.Type() == numberType:
		f, err := v.Interface().(json.Number).Float64()
		if err != nil {
			return nil
		}
		x = f
	case v.CanInt():
		x = float64(v.Int())
	case v.CanUint():
		x = float64(v.Uint())
	default:
		x = v.Float()
	}
	return &x
}

// setNumber writes x into v, a number of any kind.
func setNumber(v reflect.Value, x float64) {
	switch {
	case v.CanInt():
		v.SetInt(int64(x))
	case v.CanUint():
		v.SetUint(uint64(x))
	default:
		v.SetFloat(x)
	}
}

// newNumber is a new pointer of type t to x; nil for nil.
func newNumber(t reflect.Type, x *float64) reflect.Value {
	if x == nil {
		return reflect.Zero(t)
	}
	n := reflect.New(t.Elem())
	setNumber(n.Elem(), *x)
	return n
}

// jsonValue is x as a JSON value decodes, a float64, held in an
// interface of type t; nil for null.
func jsonValue(t reflect.Type, x *float64) reflect.Value {
	if x == nil {
		return reflect.Zero(t)
	}
	return reflect.ValueOf(*x)
}

func isNumber(k reflect.Kind) bool {
	return isWhole(k) || k == reflect.Float32 || k == reflect.Float64
}

func isWhole(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// embedsStruct says whether v, an embedded field, is a struct or a
// pointer to one: what encoding/json inlines.
func embedsStruct(v reflect.Value) bool {
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

func hasOpt(opts, name string) bool { return slices.Contains(strings.Split(opts, ","), name) }

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func call(f func()) {
	if f != nil {
		f()
	}
}
