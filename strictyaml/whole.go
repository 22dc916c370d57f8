package strictyaml

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"go.yaml.in/yaml/v3"
)

// wholeNumbers walks n along type t and reports every number with a
// fraction, an exponent or no end (.inf, .nan) given to a whole-number
// field. yaml.v3 reads a float into an int by truncating it: 9.7 becomes
// 9, and -.inf or -1e300 the least int64, without an error.
func wholeNumbers(n *yaml.Node, t reflect.Type, path string) herd.FieldErrors {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out herd.FieldErrors
	switch {
	case n.Kind == yaml.ScalarNode:
		e := wholeNumber(n, t)
		if e == nil {
			e = trueOrFalse(n, t)
		}
		if e != nil {
			e.Field = path
			out = append(out, e)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			out = append(out, wholeNumbers(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, wholeNumbers(n.Content[i+1], t.Elem(), Join(path, n.Content[i].Value))...)
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := Fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				out = append(out, wholeNumbers(n.Content[i+1], ft, Join(path, n.Content[i].Value))...)
			}
		}
	}
	return out
}

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// wholeNumber is the problem of a float scalar n given to t, a whole
// number's type; nil when n is not a float, t reads its own values or
// n is a whole number within t's range.
func wholeNumber(n *yaml.Node, t reflect.Type) *herd.FieldError {
	signed := t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64
	unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64
	p := reflect.PointerTo(t)
	if n.Tag != "!!float" || (!signed && !unsigned) || p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType) {
		return nil
	}
	want := "a whole number, such as 100"
	if unsigned {
		want = "a whole number, 0 or more, such as 100"
	}
	e := &herd.FieldError{Line: n.Line}
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	switch low := strings.ToLower(strings.TrimLeft(n.Value, "+-")); {
	case low == ".inf" || low == ".nan" || math.IsInf(v, 0) || math.IsNaN(v):
		e.Msg = fmt.Sprintf("%s is not a finite number (accepted: %s)", n.Value, want)
	case err != nil:
		return nil // the decoder says what it is
	case v != math.Trunc(v):
		e.Msg = fmt.Sprintf("%s is not a whole number (accepted: %s)", n.Value, want)
	case unsigned && v < 0:
		e.Msg = fmt.Sprintf("%s is negative (accepted: %s)", n.Value, want)
	case signed && (v < math.MinInt64 || v >= math.MaxInt64 || reflect.Zero(t).OverflowInt(int64(v))),
		unsigned && (v >= math.MaxUint64 || reflect.Zero(t).OverflowUint(uint64(v))):
		e.Msg = fmt.Sprintf("%s out of range (accepted: %s)", n.Value, want)
	default:
		return nil
	}
	return e
}

// trueOrFalse is the problem of a scalar n given to a bool that is not
// true or false as YAML 1.2 writes them: yaml.v3 reads the string "yes",
// quoted, as true, and so a switch like allow_pause was turned on by a
// value that reads as a word.
func trueOrFalse(n *yaml.Node, t reflect.Type) *herd.FieldError {
	if t.Kind() != reflect.Bool || n.Tag == "!!bool" || n.Tag == "!!null" {
		return nil
	}
	return &herd.FieldError{Line: n.Line, Msg: fmt.Sprintf("%q is not true or false (accepted: true or false, unquoted)", n.Value)}
}
