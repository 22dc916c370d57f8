// Package figure is the vocabulary a figure of results is declared in:
// a Figure (a number named by its path in the results' JSON, with its
// kind, unit and wholeness), and the builders of a Decl, a type's
// figures field by field, walked with no reflection. It guarantees that
// a walk finds exactly the numbers the results print (a field omitempty
// leaves out is none, a nil pointer printed as null is a figure without a
// value), settable through the Go value it walked, and with Schema every
// number the type may hold. Each type's figures are declared once,
// beside the type that owns them: an arm's in package experiment, a
// trigger's detail in package triggers (Declared).
package figure

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// Figure is one number of an arm's results, named by its path in them
// (db.queries, requests.checkout.p99_ms, trigger.detail.lost: the JSON
// names, a map's keys at its parent's path), read and written on the Go
// value it was found in. Every figure is declared once, with its unit
// and kind, beside the type that holds it.
//
// The figures of a value are the numbers its results print: a field
// omitempty leaves out when it is zero or nil is none, a nil pointer the
// results print as null is a figure without a value, and a slice's
// elements are none (the timeline is no gate's business).
type Figure struct {
	Path  string
	Kind  Kind
	Unit  string // ms, us, /s; "" for a count, a ratio or a level
	Whole bool   // an integer in its Go type, a count: a median of it rounds half up
	get   func() *float64
	set   func(*float64)
}

// Kind is what a figure measures.
type Kind string

// The kinds of figures.
const (
	Count    Kind = "count"    // events counted: requests, queries, keys
	Ratio    Kind = "ratio"    // one figure over another: a share, an amplification
	Duration Kind = "duration" // a time, or an instant from T
	Rate     Kind = "rate"     // events a second
	Level    Kind = "level"    // a setting or a state, not counted: a weight, an exit code, a config knob
)

// Declared is a value that declares its own figures beside its type (a
// trigger's detail): Figures walks them at path, by Pointer.
type Declared interface {
	Figures(path string, c *Collector) any
}

// Pointer walks the figures of *d by figs, a nil d null (with Schema: a
// U's), and returns what holds d is to hold: d, or under Own its copy.
func Pointer[U any](d *U, path string, c *Collector, figs Decl[U]) any {
	switch {
	case d == nil && c.Schema:
		figs.Walk(new(U), path, c)
	case d == nil:
		c.Null(path)
	default:
		if c.Own {
			cp := *d
			d = &cp
		}
		figs.Walk(d, path, c)
	}
	return d
}

// Value is the figure's number; nil when the results print it as null.
func (f Figure) Value() *float64 { return f.get() }

// Set writes v into the value the figure was found in (nil: null, or 0
// where the results cannot print null).
func (f Figure) Set(v *float64) { f.set(v) }

// Collector gathers the figures a declaration finds.
type Collector struct {
	Schema bool // every number the types hold (figurePaths), not only those the results print
	Names  bool // with schema: a map's figures under NAME (schemaPaths)
	Own    bool // copy every pointer and map walked through before it is walked (ownFigures)
	Out    []Figure
}

func (c *Collector) add(path string, k Kind, unit string, whole bool, get func() *float64, set func(*float64)) {
	c.Out = append(c.Out, Figure{Path: path, Kind: k, Unit: unit, Whole: whole, get: get, set: set})
}

// Paths are the paths of the figures found, sorted, each once.
func (c *Collector) Paths() []string {
	paths := make([]string, 0, len(c.Out))
	for _, f := range c.Out {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// Null adds a figure without a value: a nil pointer, slice or interface
// the results print as null.
func (c *Collector) Null(path string) {
	c.add(path, Level, "", false, func() *float64 { return nil }, func(*float64) {})
}

// Decl declares the figures of a T, each member a field of it.
type Decl[T any] []Member[T]

func (d Decl[T]) Walk(v *T, path string, c *Collector) {
	for _, m := range d {
		m.Walk(v, Join(path, m.Name), m.Omit, c)
	}
}

// Member is one field of a T: a number, or a value holding numbers.
// Omit: the results leave it out when it is zero or nil (omitempty).
type Member[T any] struct {
	Name string
	Omit bool
	Walk func(v *T, path string, omit bool, c *Collector)
}

// OmitEmpty is m for a field the results leave out when it is zero or nil.
func (m Member[T]) OmitEmpty() Member[T] { m.Omit = true; return m }

type number interface{ ~int | ~int64 | ~float64 }

// whole says whether N is an integer type.
func whole[N number]() bool {
	half := 0.5
	return N(half) == 0
}

// NumberOf declares a number field of T, of kind k in unit.
func NumberOf[T any, N number](name string, k Kind, unit string, p func(*T) *N) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, omit bool, c *Collector) {
		x := p(v)
		if omit && *x == 0 && !c.Schema {
			return
		}
		c.add(path, k, unit, whole[N](), func() *float64 { f := float64(*x); return &f }, func(f *float64) {
			if f == nil {
				*x = 0
				return
			}
			*x = N(*f)
		})
	}}
}

// Opt declares a field of T pointing to a number: null when nil.
func Opt[T any, N number](name string, k Kind, unit string, p func(*T) **N) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, omit bool, c *Collector) {
		x := p(v)
		if *x == nil && omit && !c.Schema {
			return
		}
		c.add(path, k, unit, whole[N](), func() *float64 {
			if *x == nil {
				return nil
			}
			f := float64(**x)
			return &f
		}, func(f *float64) { // a new pointer: the one held may be shared
			*x = nil
			if f != nil {
				n := N(*f)
				*x = &n
			}
		})
	}}
}

// CountOf, RatioOf, RateOf, MillisOf and LevelOf declare a number field of T of
// their kind (and unit: /s, ms).
func CountOf[T any, N number](name string, p func(*T) *N) Member[T] {
	return NumberOf(name, Count, "", p)
}
func RatioOf[T any, N number](name string, p func(*T) *N) Member[T] {
	return NumberOf(name, Ratio, "", p)
}
func RateOf[T any, N number](name string, p func(*T) *N) Member[T] {
	return NumberOf(name, Rate, "/s", p)
}
func MillisOf[T any, N number](name string, p func(*T) *N) Member[T] {
	return NumberOf(name, Duration, "ms", p)
}
func LevelOf[T any, N number](name string, p func(*T) *N) Member[T] {
	return NumberOf(name, Level, "", p)
}

// Group declares a struct field of T, its figures d's at its name ("":
// inlined at T's path).
func Group[T, U any](name string, p func(*T) *U, d Decl[U]) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, _ bool, c *Collector) { d.Walk(p(v), path, c) }}
}

// Nullable declares a field of T pointing to a U: null when nil.
func Nullable[T, U any](name string, p func(*T) **U, d Decl[U]) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, omit bool, c *Collector) {
		x := p(v)
		switch {
		case *x == nil && c.Schema:
			d.Walk(new(U), path, c)
		case *x == nil && !omit:
			c.Null(path)
		case *x != nil:
			if c.Own {
				cp := **x
				*x = &cp
			}
			d.Walk(*x, path, c)
		}
	}}
}

// NullWhen declares a field of T that holds no figure (a slice's
// elements, a time) but prints as null when isNil: a figure without a
// value then.
func NullWhen[T any](name string, isNil func(*T) bool) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, omit bool, c *Collector) {
		if isNil(v) && !omit && !c.Schema {
			c.Null(path)
		}
	}}
}

// Family declares a map field of T of U by name (requests.NAME.*): each
// key's figures d's, a nil value null.
func Family[T, U any, M ~map[string]*U](name string, p func(*T) *M, d Decl[U]) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, _ bool, c *Collector) {
		m := p(v)
		if c.Own {
			*m = maps.Clone(*m)
			for k, u := range *m {
				if u != nil {
					x := *u
					(*m)[k] = &x
				}
			}
		}
		if c.Names {
			d.Walk(new(U), Join(path, "NAME"), c)
		}
		for k, u := range *m {
			if u == nil {
				c.Null(Join(path, k))
				continue
			}
			d.Walk(u, Join(path, k), c)
		}
	}}
}

// Keyed declares a map field of T of U at the names declared() lists, in
// its order (the loop's subject counters): each name's figures d's at
// name+suffix, null where the map has none. The map is T's own
// (json:"-"); T's encoding writes it.
func Keyed[T, U any](suffix string, p func(*T) *map[string]*U, declared func() []string, d Decl[U]) Member[T] {
	return Member[T]{Walk: func(v *T, path string, omit bool, c *Collector) {
		m := p(v)
		if c.Own && *m != nil {
			*m = maps.Clone(*m)
			for k, u := range *m {
				if u != nil {
					x := *u
					(*m)[k] = &x
				}
			}
		}
		for _, k := range declared() {
			at := Join(path, k+suffix)
			switch u := (*m)[k]; {
			case c.Schema:
				d.Walk(new(U), at, c)
			case u == nil && !omit:
				c.Null(at)
			case u != nil:
				d.Walk(u, at, c)
			}
		}
	}}
}

// Counts declares a map field of T of counts by name (outcomes.NAME).
func Counts[T any](name string, p func(*T) *map[string]int64) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, _ bool, c *Collector) {
		m := p(v)
		if c.Own {
			*m = maps.Clone(*m)
		}
		keys := slices.Collect(maps.Keys(*m))
		if c.Names {
			keys = []string{"NAME"}
		}
		for _, k := range keys {
			c.add(Join(path, k), Count, "", true, func() *float64 { f := float64((*m)[k]); return &f }, func(f *float64) {
				(*m)[k] = 0
				if f != nil {
					(*m)[k] = int64(*f)
				}
			})
		}
	}}
}

// Named declares a field of T holding counts in an order of their own (a
// subject's counters), each a Count at its name; nil is null, and a
// schema has declared's names.
func Named[T, E any](name string, p func(*T) *[]E, key func(*E) string, val func(*E) *int64, declared func() []string) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, omit bool, c *Collector) {
		s := p(v)
		switch {
		case c.Schema:
			for _, k := range declared() {
				c.add(Join(path, k), Count, "", true, func() *float64 { return new(float64) }, func(*float64) {})
			}
			return
		case *s == nil:
			if !omit {
				c.Null(path)
			}
			return
		case c.Own:
			*s = slices.Clone(*s)
		}
		for i := range *s {
			x := &(*s)[i]
			c.add(Join(path, key(x)), Count, "", true, func() *float64 { f := float64(*val(x)); return &f }, func(f *float64) {
				*val(x) = 0
				if f != nil {
					*val(x) = int64(*f)
				}
			})
		}
	}}
}

// RawJSON declares a field of T holding JSON as its text (an arm's
// config, its subject's own): its numbers are figures, Level, read from
// its decoding and set in it, the text then encoded again (its keys
// sorted, as encoding/json writes a map). What it holds is the subject's:
// no gate path.
func RawJSON[T any](name string, p func(*T) *json.RawMessage) Member[T] {
	return Member[T]{Name: name, Walk: func(v *T, path string, _ bool, c *Collector) {
		raw := p(v)
		if len(*raw) == 0 || c.Schema {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(*raw))
		dec.UseNumber() // what is not set stays exactly as it was
		var tree any
		if dec.Decode(&tree) != nil {
			return
		}
		JSON(&tree, path, c, func() {
			if b, err := json.Marshal(tree); err == nil {
				*raw = b
			}
		})
	}}
}

// JSON adds the numbers of a JSON value *v (a float64, or a
// json.Number, as it was decoded) and its objects' members; save is
// called after each is set.
func JSON(v *any, path string, c *Collector, save func()) {
	switch x := (*v).(type) {
	case nil, float64, json.Number:
		_, text := x.(json.Number)
		c.add(path, Level, "", false, func() *float64 { return jsonNumber(*v) }, func(f *float64) {
			switch {
			case text && f == nil:
				*v = json.Number("")
			case text:
				*v = json.Number(strconv.FormatFloat(*f, 'g', -1, 64))
			case f == nil:
				*v = nil
			default:
				*v = *f
			}
			save()
		})
	case map[string]any:
		if c.Own {
			x = maps.Clone(x)
			*v = x
		}
		for k := range x {
			e := x[k]
			JSON(&e, Join(path, k), c, func() { x[k] = e; save() })
		}
	}
}

// jsonNumber is the number a JSON value holds; nil for null.
func jsonNumber(v any) *float64 {
	switch x := v.(type) {
	case float64:
		return &x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return &f
		}
	}
	return nil
}

func Join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	if name == "" {
		return prefix
	}
	return prefix + "." + name
}
