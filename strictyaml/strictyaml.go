// Package strictyaml decodes the YAML files herdbench reads (scenarios,
// targets) into Go types strictly, and reports every problem at once, each
// as "file:line: key.path: what is wrong (accepted: ...)": keys the type
// has no field for (with the keys it accepts) and values of the wrong type
// (with what the field accepts). Doc remembers where each key is, so later
// checks of the values can point at them too.
//
// Keys are the fields' `yaml` tags. Paths name keys from the top, with
// list elements indexed: load.rate, arms[1].knobs.ttl.
package strictyaml

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"go.yaml.in/yaml/v3"
)

// Doc is where a decoded file's keys are.
type Doc struct {
	Name  string         // the file's name in errors
	lines map[string]int // path -> line of its key (or element)
	bad   map[int]bool   // lines whose value did not decode
	leaf  map[string]bool
	// failed: a value did not decode (of the wrong type, null, a key given
	// twice), so v lacks it and checks of v would blame other fields
	failed bool
	// unknownIn: the sections (paths, "" for the top) holding an unknown key
	unknownIn map[string]bool
}

// ErrUnknownKey is the cause of a key the type has no field for.
var ErrUnknownKey = errors.New("unknown key")

// Failed says whether a value of the file did not decode: its problems
// should then be reported alone, since checks of what decoded would
// blame fields the user got right. An unknown key is dropped, and does
// not count.
func (d *Doc) Failed() bool { return d.failed }

// Misspelt says whether path is a key absent from a section that holds
// an unknown key (prometheus.url beside prometheus.address): a check that
// blames it (required, empty) follows from the misspelling the unknown
// key's problem tells, and should not be told too.
func (d *Doc) Misspelt(path string) bool {
	section, _, _ := cutLast(path)
	return d.lines[path] == 0 && d.unknownIn[section]
}

// cutLast splits path at its last dot: "prometheus.url" is "prometheus"
// and "url"; a top-level key's section is "".
func cutLast(path string) (section, key string, found bool) {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[:i], path[i+1:], true
	}
	return "", path, false
}

// Line is where path is in the file, 0 when it is not.
func (d *Doc) Line(path string) int { return d.lines[path] }

// Bad says whether the value at path failed to decode (it holds a zero
// value, not the file's).
func (d *Doc) Bad(path string) bool { return d.bad[d.lines[path]] }

// At is "file:line: path", for an error about the value at path.
func (d *Doc) At(path string) string { return fmt.Sprintf("%s:%d: %s", d.Name, d.lines[path], path) }

// Decode decodes b, a file of one document, into v, a pointer to a
// struct; what names the document in errors (scenario, target). The error
// lists every problem, each a herd.FieldError with the file, line and key
// path, in file order: keys the type has no field for, a key given twice,
// a key with no value (null, ~: leaving the key out gives its default),
// values of the wrong type, an empty file and a second document. v holds
// what did decode; when Doc.Failed, a caller should report these problems
// alone, since checks of what did not decode would blame the wrong field.
func Decode(b []byte, name, what string, v any) (*Doc, error) {
	d := &Doc{Name: name, lines: map[string]int{}, bad: map[int]bool{}, leaf: map[string]bool{}, unknownIn: map[string]bool{}}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, what, err)
	}
	if len(root.Content) == 0 || isNull(root.Content[0]) {
		d.failed = true
		return d, herd.FieldErrors{{File: name, Line: 1, Msg: fmt.Sprintf("empty: no keys (accepted: a %s's keys, docs/%ss.md)", what, what)}}.Err()
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		line := second.Line
		if err != nil {
			line = yamlLine(strings.TrimPrefix(err.Error(), "yaml: "))
		}
		d.failed = true
		return d, herd.FieldErrors{{File: name, Line: line, Msg: fmt.Sprintf("a second document at line %d: one %s per file (accepted: one document, with --- at its top at most)", line, what)}}.Err()
	}
	doc := root.Content[0]
	problems := d.index(doc, "")
	unknown := unknownKeys(doc, reflect.TypeOf(v), "")
	for _, p := range unknown {
		if errors.Is(p.Err, ErrUnknownKey) {
			section, _, _ := cutLast(p.Field)
			d.unknownIn[section] = true
		} else {
			d.failed = true
		}
	}
	problems = append(problems, unknown...)
	notWhole := wholeNumbers(doc, reflect.TypeOf(v), "")
	for _, p := range notWhole {
		d.bad[p.Line] = true
	}
	problems = append(problems, notWhole...)
	d.failed = d.failed || len(problems) > len(unknown)
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, yamlError(name, what, err)
		}
		for _, p := range te.Errors {
			told := slices.ContainsFunc(notWhole, func(e *herd.FieldError) bool { return e.Line == yamlLine(p) })
			if !told && !strings.Contains(p, " already defined at line ") { // index named the key given twice
				problems = append(problems, d.explain(p))
				d.failed = true
			}
		}
	}
	for _, p := range problems {
		p.File = name
	}
	return d, problems.ByLine().Err()
}

// isNull says whether n is a YAML null: null, ~ or nothing after a key.
func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// Problem makes a problem with the value at n for an unmarshaler, worded
// as the decoder words its own, so Decode reports it with its line.
func Problem(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: ", n.Line) + fmt.Sprintf(format, args...)}}
}

// index records where each key and element of n is, and returns the
// keys given twice in a mapping.
func (d *Doc) index(n *yaml.Node, path string) herd.FieldErrors {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = n.Line
	}
	var twice herd.FieldErrors
	switch n.Kind {
	case yaml.ScalarNode:
		d.leaf[path] = true
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := Join(path, k.Value)
			if first, dup := seen[k.Value]; dup {
				twice = append(twice, &herd.FieldError{Line: k.Line, Field: p,
					Msg: fmt.Sprintf("given twice, at lines %d and %d (accepted: each key once)", first, k.Line)})
				continue
			}
			seen[k.Value] = k.Line
			d.lines[p] = k.Line
			twice = append(twice, d.index(n.Content[i+1], p)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			twice = append(twice, d.index(c, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return twice
}

// kinds names what a Go type accepts, for type errors.
var kinds = map[string]string{
	"int": "a whole number", "int64": "a whole number", "uint64": "a whole number, 0 or more", "uint32": "a whole number, 0 or more",
	"float64": "a number", "bool": "true or false", "string": "a string", "[]string": "a list of strings",
	"map[string]string": "a mapping of names to strings",
}

// explain turns one of the decoder's problems ("line 5: cannot unmarshal
// !!seq into int", the only form yaml.v3 gives them in) into a FieldError
// naming the key and what it accepts, and marks the line bad.
func (d *Doc) explain(p string) *herd.FieldError {
	line := yamlLine(p)
	msg := p
	if _, rest, ok := strings.Cut(p, ": "); ok && strings.HasPrefix(p, "line ") {
		msg = rest
	}
	_, rest, ok := strings.Cut(p, "cannot unmarshal ")
	if !ok {
		return &herd.FieldError{Line: line, Msg: msg}
	}
	d.bad[line] = true
	got, into, _ := strings.Cut(rest, " into ")
	into = strings.TrimPrefix(into, "*")
	want, ok := kinds[into]
	switch {
	case ok:
	case strings.HasPrefix(into, "[]"):
		want = "a list"
	default:
		want = "a mapping"
	}
	if into == "float64" && strings.HasPrefix(got, "!!str `") {
		num := strings.TrimSuffix(strings.TrimPrefix(got, "!!str `"), "`")
		if _, err := strconv.ParseFloat(num, 64); errors.Is(err, strconv.ErrRange) {
			return &herd.FieldError{Line: line, Field: d.leafAt(line), Msg: fmt.Sprintf("%s is not a finite number (accepted: a number, such as 0.5)", num)}
		}
	}
	got = strings.NewReplacer("!!seq", "a list", "!!map", "a mapping", "!!str", "the string", "!!int", "the number",
		"!!float", "the number", "!!bool", "the value").Replace(got)
	// a key and its value's elements share a line: a list or mapping that
	// does not decode is the shortest of them, a scalar one a leaf
	scalar := !strings.HasPrefix(got, "a list") && !strings.HasPrefix(got, "a mapping")
	var at []string
	for path, l := range d.lines {
		if l == line && path != "" && (!scalar || d.leaf[path]) {
			at = append(at, path)
		}
	}
	return &herd.FieldError{Line: line, Field: shortest(at), Msg: fmt.Sprintf("%s where %s is expected (accepted: %s)", got, want, want)}
}

// leafAt is the key of the scalar at line, "" when there is not one.
func (d *Doc) leafAt(line int) string {
	var at []string
	for path, l := range d.lines {
		if l == line && path != "" && d.leaf[path] {
			at = append(at, path)
		}
	}
	return shortest(at)
}

// shortest is the shortest of paths when it is the start of every other,
// as a key is of its value's elements on the same line; else "".
func shortest(at []string) string {
	slices.SortFunc(at, func(a, b string) int { return len(a) - len(b) })
	if len(at) > 0 && !slices.ContainsFunc(at, func(p string) bool { return !strings.HasPrefix(p, at[0]) }) {
		return at[0]
	}
	return ""
}

// yamlError is a YAML syntax error of file name, a what, with its line.
func yamlError(name, what string, err error) *herd.FieldError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := yamlLine(msg)
	if _, rest, ok := strings.Cut(msg, ": "); ok && line > 0 {
		msg = rest
	}
	return &herd.FieldError{File: name, Line: line, Err: err,
		Msg: fmt.Sprintf("not YAML: %s (accepted: a %s file in YAML, docs/%ss.md)", msg, what, what)}
}

// yamlLine reads the line yaml.v3 puts in its messages ("line N: ...",
// "yaml: line N: ..."), 0 when there is none.
func yamlLine(msg string) int {
	var n int
	_, _ = fmt.Sscanf(strings.TrimPrefix(msg, "yaml: "), "line %d:", &n)
	return n
}

// unknownKeys walks n along type t and reports every key t has no field
// for, with the accepted keys. Maps accept any key, and so does a struct
// with an inline map: its owner checks the keys that land there.
func unknownKeys(n *yaml.Node, t reflect.Type, path string) herd.FieldErrors {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		var out herd.FieldErrors
		for i, c := range n.Content {
			out = append(out, unknownKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		var out herd.FieldErrors
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := Join(path, n.Content[i].Value)
			if isNull(n.Content[i+1]) {
				out = append(out, noValue(n.Content[i], p, t.Elem()))
				continue
			}
			out = append(out, unknownKeys(n.Content[i+1], t.Elem(), p)...)
		}
		return out
	case t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode:
		return nil // a type error, which the decoder reports
	}
	fields := Fields(t)
	_, open := fields[",inline"]
	var out herd.FieldErrors
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		switch {
		case ok && isNull(v):
			out = append(out, noValue(k, Join(path, k.Value), ft))
		case ok:
			out = append(out, unknownKeys(v, ft, Join(path, k.Value))...)
		case !open:
			out = append(out, &herd.FieldError{Line: k.Line, Field: Join(path, k.Value), Err: ErrUnknownKey,
				Msg: fmt.Sprintf("unknown key %q (accepted: %s)", k.Value, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))})
		}
	}
	return out
}

// noValue is the problem of key k, at path, given no value (null, ~ or
// nothing): decoded, it would be the default, as if the key were left out.
func noValue(k *yaml.Node, path string, t reflect.Type) *herd.FieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want, ok := kinds[t.String()]
	switch {
	case ok:
	case t.Kind() == reflect.Slice:
		want = "a list"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		want = "a mapping"
	default:
		want = "a value"
	}
	return &herd.FieldError{Line: k.Line, Field: path, Msg: fmt.Sprintf("no value (accepted: %s; or leave the key out, for its default)", want)}
}

// Fields maps a struct's YAML keys to their types. An inline map field,
// which takes every other key, is under ",inline"; an inline struct's keys
// are the struct's own.
func Fields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if opts == "inline" && f.Type.Kind() == reflect.Map {
			m[",inline"] = f.Type
			continue
		}
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			maps.Copy(m, Fields(f.Type)) // its keys are the outer struct's
			continue
		}
		name = cmp.Or(name, strings.ToLower(f.Name))
		m[name] = f.Type
	}
	return m
}

// Join appends a key to a path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
