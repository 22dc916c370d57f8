package experiment

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/triggers"
)

// Figure is one number of an arm's results, named by its path in them
// (db.queries, requests.checkout.p99_ms, trigger.detail.lost: the JSON
// names, a map's keys at its parent's path), read and written on the Go
// value it was found in. Every figure is declared once, in armFigures
// (figure_table.go), with its unit and kind; gates read figures, repeats
// take their medians, and the results contract's table (contract.go)
// names each one's source and window.
//
// The figures of a value are the numbers its results print: a field
// omitempty leaves out when it is zero or nil is none, a nil pointer the
// results print as null is a figure without a value, and a slice's
// elements are none (the timeline is no gate's business).
type Figure struct {
	Path  string
	Kind  FigureKind
	Unit  string // ms, us, /s; "" for a count, a ratio or a level
	Whole bool   // an integer in its Go type, a count: a median of it rounds half up
	get   func() *float64
	set   func(*float64)
}

// FigureKind is what a figure measures.
type FigureKind string

// The kinds of figures.
const (
	Count    FigureKind = "count"    // events counted: requests, queries, keys
	Ratio    FigureKind = "ratio"    // one figure over another: a share, an amplification
	Duration FigureKind = "duration" // a time, or an instant from T
	Rate     FigureKind = "rate"     // events a second
	Level    FigureKind = "level"    // a setting or a state, not counted: a weight, an exit code, a config knob
)

// Value is the figure's number; nil when the results print it as null.
func (f Figure) Value() *float64 { return f.get() }

// Set writes v into the value the figure was found in (nil: null, or 0
// where the results cannot print null).
func (f Figure) Set(v *float64) { f.set(v) }

// Figures are the figures of a by path: what a gate reads.
func (a ArmResult) Figures() map[string]*float64 {
	out := map[string]*float64{}
	for _, f := range figuresOf(&a) {
		out[f.Path] = f.Value()
	}
	return out
}

// figuresOf are the figures of *a, settable through it, sorted by path.
func figuresOf(a *ArmResult) []Figure {
	c := &collector{}
	armFigures.walk(a, "", c)
	slices.SortFunc(c.out, func(a, b Figure) int { return strings.Compare(a.Path, b.Path) })
	return c.out
}

// ownFigures are figuresOf(a) once every pointer and map the figures lie
// under is a' own copy: setting them writes nothing a shares with another
// value (a repeat's median run with its representative).
func ownFigures(a *ArmResult) []Figure {
	c := &collector{own: true}
	armFigures.walk(a, "", c)
	return c.out
}

// figurePaths are the paths of every number v's type may hold, sorted:
// nil pointers as if set, fields omitempty leaves out too; a map's keys
// none, a trigger's detail its own type's. What a gate may name. v is an
// *ArmResult, *RequestFigures or *LBServer.
func figurePaths(v any) []string {
	c := &collector{schema: true}
	switch x := v.(type) {
	case *ArmResult:
		armFigures.walk(x, "", c)
	case *RequestFigures:
		requestFigures.walk(x, "", c)
	case *LBServer:
		lbServerFigures.walk(x, "", c)
	}
	return c.paths()
}

// schemaPaths are figurePaths of an arm with every trigger's detail;
// names: with a map's figures under NAME (requests.NAME.p99_ms), the
// paths each of which has a row in the results contract (contract.go).
func schemaPaths(names bool) []string {
	c := &collector{schema: true, names: names}
	for _, t := range triggers.Default().Triggers() {
		armFigures.walk(&ArmResult{Trigger: TriggerResult{Detail: t.Detail()}}, "", c)
	}
	return c.paths()
}

// collector gathers the figures a declaration finds.
type collector struct {
	schema bool // every number the types hold (figurePaths), not only those the results print
	names  bool // with schema: a map's figures under NAME (schemaPaths)
	own    bool // copy every pointer and map walked through before it is walked (ownFigures)
	out    []Figure
}

func (c *collector) add(path string, k FigureKind, unit string, whole bool, get func() *float64, set func(*float64)) {
	c.out = append(c.out, Figure{Path: path, Kind: k, Unit: unit, Whole: whole, get: get, set: set})
}

// paths are the paths of the figures found, sorted, each once.
func (c *collector) paths() []string {
	paths := make([]string, 0, len(c.out))
	for _, f := range c.out {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// null adds a figure without a value: a nil pointer, slice or interface
// the results print as null.
func (c *collector) null(path string) {
	c.add(path, Level, "", false, func() *float64 { return nil }, func(*float64) {})
}

// decl declares the figures of a T, each member a field of it.
type decl[T any] []member[T]

func (d decl[T]) walk(v *T, path string, c *collector) {
	for _, m := range d {
		m.walk(v, join(path, m.name), m.omit, c)
	}
}

// member is one field of a T: a number, or a value holding numbers.
// omit: the results leave it out when it is zero or nil (omitempty).
type member[T any] struct {
	name string
	omit bool
	walk func(v *T, path string, omit bool, c *collector)
}

// omitEmpty is m for a field the results leave out when it is zero or nil.
func (m member[T]) omitEmpty() member[T] { m.omit = true; return m }

type number interface{ ~int | ~int64 | ~float64 }

// whole says whether N is an integer type.
func whole[N number]() bool {
	half := 0.5
	return N(half) == 0
}

// numberOf declares a number field of T, of kind k in unit.
func numberOf[T any, N number](name string, k FigureKind, unit string, p func(*T) *N) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, omit bool, c *collector) {
		x := p(v)
		if omit && *x == 0 && !c.schema {
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

// opt declares a field of T pointing to a number: null when nil.
func opt[T any, N number](name string, k FigureKind, unit string, p func(*T) **N) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, omit bool, c *collector) {
		x := p(v)
		if *x == nil && omit && !c.schema {
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

// count, ratio, rate, millis and level declare a number field of T of
// their kind (and unit: /s, ms).
func count[T any, N number](name string, p func(*T) *N) member[T] {
	return numberOf(name, Count, "", p)
}
func ratio[T any, N number](name string, p func(*T) *N) member[T] {
	return numberOf(name, Ratio, "", p)
}
func rate[T any, N number](name string, p func(*T) *N) member[T] {
	return numberOf(name, Rate, "/s", p)
}
func millis[T any, N number](name string, p func(*T) *N) member[T] {
	return numberOf(name, Duration, "ms", p)
}
func level[T any, N number](name string, p func(*T) *N) member[T] {
	return numberOf(name, Level, "", p)
}

// group declares a struct field of T, its figures d's at its name ("":
// inlined at T's path).
func group[T, U any](name string, p func(*T) *U, d decl[U]) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, _ bool, c *collector) { d.walk(p(v), path, c) }}
}

// nullable declares a field of T pointing to a U: null when nil.
func nullable[T, U any](name string, p func(*T) **U, d decl[U]) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, omit bool, c *collector) {
		x := p(v)
		switch {
		case *x == nil && c.schema:
			d.walk(new(U), path, c)
		case *x == nil && !omit:
			c.null(path)
		case *x != nil:
			if c.own {
				cp := **x
				*x = &cp
			}
			d.walk(*x, path, c)
		}
	}}
}

// nullWhen declares a field of T that holds no figure (a slice's
// elements, a time) but prints as null when isNil: a figure without a
// value then.
func nullWhen[T any](name string, isNil func(*T) bool) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, omit bool, c *collector) {
		if isNil(v) && !omit && !c.schema {
			c.null(path)
		}
	}}
}

// family declares a map field of T of U by name (requests.NAME.*): each
// key's figures d's, a nil value null.
func family[T, U any, M ~map[string]*U](name string, p func(*T) *M, d decl[U]) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, _ bool, c *collector) {
		m := p(v)
		if c.own {
			*m = maps.Clone(*m)
			for k, u := range *m {
				if u != nil {
					x := *u
					(*m)[k] = &x
				}
			}
		}
		if c.names {
			d.walk(new(U), join(path, "NAME"), c)
		}
		for k, u := range *m {
			if u == nil {
				c.null(join(path, k))
				continue
			}
			d.walk(u, join(path, k), c)
		}
	}}
}

// counts declares a map field of T of counts by name (outcomes.NAME).
func counts[T any](name string, p func(*T) *map[string]int64) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, _ bool, c *collector) {
		m := p(v)
		if c.own {
			*m = maps.Clone(*m)
		}
		keys := slices.Collect(maps.Keys(*m))
		if c.names {
			keys = []string{"NAME"}
		}
		for _, k := range keys {
			c.add(join(path, k), Count, "", true, func() *float64 { f := float64((*m)[k]); return &f }, func(f *float64) {
				(*m)[k] = 0
				if f != nil {
					(*m)[k] = int64(*f)
				}
			})
		}
	}}
}

// rawJSON declares a field of T holding JSON as its text (an arm's
// config, its subject's own): its numbers are figures, Level, read from
// its decoding and set in it, the text then encoded again (its keys
// sorted, as encoding/json writes a map). What it holds is the subject's:
// no gate path.
func rawJSON[T any](name string, p func(*T) *json.RawMessage) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, _ bool, c *collector) {
		raw := p(v)
		if len(*raw) == 0 || c.schema {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(*raw))
		dec.UseNumber() // what is not set stays exactly as it was
		var tree any
		if dec.Decode(&tree) != nil {
			return
		}
		jsonFigures(&tree, path, c, func() {
			if b, err := json.Marshal(tree); err == nil {
				*raw = b
			}
		})
	}}
}

// jsonFigures adds the numbers of a JSON value *v (a float64, or a
// json.Number, as it was decoded) and its objects' members; save is
// called after each is set.
func jsonFigures(v *any, path string, c *collector, save func()) {
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
		if c.own {
			x = maps.Clone(x)
			*v = x
		}
		for k := range x {
			e := x[k]
			jsonFigures(&e, join(path, k), c, func() { x[k] = e; save() })
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

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	if name == "" {
		return prefix
	}
	return prefix + "." + name
}
