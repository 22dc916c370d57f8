package herd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one bad value: which field holds it, where it was read,
// and what is wrong with it. Field is the key as the results JSON and
// scenario files spell it (rate, hot_keys, ttl_jitter); the command line
// maps it to its flag (--hot-keys) or its file:line without reading the
// message again.
type FieldError struct {
	Field string // the key: rate, hot_keys, ttl_jitter, arms
	Elem  string // the element of a list it is about (an arm's name, a gate as written); "" for the whole field
	File  string // the file it was read from; "" when it came from flags or code
	Line  int    // its line in File, 0 when unknown
	Msg   string // what is wrong, with the accepted values
	Err   error  // the cause, for errors.Is; may be nil
	// Other is a problem of two fields' relation told as the other
	// field's, for when the user set that one and left Field at its
	// default (--ttl 1h beside stale_ttl's default, 10m): its Msg names
	// Field's value as the default. FieldErrors.Blame picks; nil when the
	// problem is Field's alone.
	Other *FieldError
}

func (e *FieldError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	if e.Elem != "" {
		b.WriteString(QuoteElem(e.Elem) + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *FieldError) Unwrap() error { return e.Err }

// QuoteElem quotes an element that holds a separator (a gate such as
// `lock:db.queries <= 120`), so the message still reads as where: what.
func QuoteElem(s string) string {
	if strings.ContainsAny(s, " :") {
		return strconv.Quote(s)
	}
	return s
}

// Errorf is a FieldError for field.
func Errorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ErrTooLong is the cause of a problem with an arm's length, warmup +
// before + after over a cap: the user may have set any of the three, or
// the cap.
var ErrTooLong = errors.New("an arm longer than its cap")

// FieldErrors are every problem of a value at once, in the order found.
type FieldErrors []*FieldError

func (fe FieldErrors) Error() string {
	lines := make([]string, len(fe))
	for i, e := range fe {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Err is fe as an error, nil when it holds none.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return fe
}

// Unwrap lets errors.Is and errors.As see every problem.
func (fe FieldErrors) Unwrap() []error {
	out := make([]error, len(fe))
	for i, e := range fe {
		out[i] = e
	}
	return out
}

// Add appends a problem with field.
func (fe *FieldErrors) Add(field, format string, args ...any) {
	*fe = append(*fe, Errorf(field, format, args...))
}

// Fields flattens err into field errors: each FieldError it holds as it
// is, any other error as a FieldError with only a message. Joined errors
// are walked, so what errors.Join gathered comes out one problem each.
func Fields(err error) FieldErrors {
	if err == nil {
		return nil
	}
	var out FieldErrors
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *FieldError:
			out = append(out, e)
			return
		case FieldErrors:
			out = append(out, e...)
			return
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				walk(c)
			}
			return
		}
		out = append(out, &FieldError{Msg: err.Error(), Err: err})
	}
	walk(err)
	return out
}

// In sets the field of every problem that has none, and prefixes the
// field of those that have one: a replica config's "ttl" becomes
// "knobs.ttl" when the config is a scenario's knobs.
func (fe FieldErrors) In(field string) FieldErrors {
	out := make(FieldErrors, len(fe))
	for i, e := range fe {
		c := *e
		switch {
		case c.Field == "":
			c.Field = field
		case field != "":
			c.Field = field + "." + c.Field
		}
		out[i] = &c
	}
	return out
}

// Blame is fe with each problem of two fields told as the field the user
// set (set says which): a problem whose Field the user left at its
// default, and whose Other's field the user set, becomes its Other.
func (fe FieldErrors) Blame(set func(field string) bool) FieldErrors {
	out := slices.Clone(fe)
	for i, e := range fe {
		if e.Other != nil && !set(e.Field) && set(e.Other.Field) {
			out[i] = e.Other
		}
	}
	return out
}

// FirstPerField is fe with one problem per value: the first found for
// each field (and element, file and line). A later one is a follow-on of
// the same bad value (plan.rate 100000 out of range, then over the
// target's cap; a NaN knob, then that no arm uses it), which the user
// fixes by fixing the first. Problems without a field are all kept.
func (fe FieldErrors) FirstPerField() FieldErrors {
	type where struct {
		file, field, elem string
		line              int
	}
	seen := map[where]bool{}
	var out FieldErrors
	for _, e := range fe {
		w := where{e.File, e.Field, e.Elem, e.Line}
		if e.Field != "" && seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, e)
	}
	return out
}

// ByLine orders problems by file and line; problems without a line keep
// their order, after those with one.
func (fe FieldErrors) ByLine() FieldErrors {
	out := slices.Clone(fe)
	slices.SortStableFunc(out, func(a, b *FieldError) int {
		switch {
		case a.Line == 0 && b.Line == 0:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		}
		return a.Line - b.Line
	})
	return out
}

// IsField says whether err is, or holds, a FieldError.
func IsField(err error) bool {
	var fe *FieldError
	return errors.As(err, &fe)
}

// ReadFile reads the file at path, the user's; a file that cannot be
// read is a problem at the file, naming why and what is accepted
// (accepted: "a scenario file, such as examples/stampede.yaml"), not a
// problem with a flag.
func ReadFile(path, accepted string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	why := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err // the path is the file's name already
	}
	return nil, &FieldError{File: path, Msg: fmt.Sprintf("%v (accepted: %s)", why, accepted), Err: err}
}
