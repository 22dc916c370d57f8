package main

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
)

// nonEmptyValue is a flag's value that refuses "" before its own Set
// (accepted: what it takes).
type nonEmptyValue struct {
	pflag.Value
	accepted string
}

func (v nonEmptyValue) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return cli.EmptyError{Accepted: v.accepted}
	}
	return v.Value.Set(s)
}

// refuseEmpty makes every flag of fs bound with pflag's own string or text
// value (StringVar, TextVar) refuse an explicit "": to pflag, "" is a
// value, which silently became the flag's default (--cache "" ran redis,
// --hedge "" no hedging). What the flag accepts is its usage, without a
// closing aside. Flags that refuse "" their own way are left alone.
func refuseEmpty(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		t := reflect.TypeOf(f.Value)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.PkgPath() != reflect.TypeOf(pflag.Flag{}).PkgPath() || (f.Value.Type() != "string" && f.Value.Type() != "") {
			return
		}
		f.Value = nonEmptyValue{f.Value, usageAccepted(f)}
	})
}

// usageAccepted is what f accepts, from its usage: without backquotes or
// a closing aside in parentheses, and how to have its default.
func usageAccepted(f *pflag.Flag) string {
	u := strings.ReplaceAll(f.Usage, "`", "")
	if i := strings.LastIndex(u, " ("); i > 0 && strings.HasSuffix(u, ")") && !strings.Contains(u[i+2:], "(") {
		u = u[:i]
	}
	switch {
	case strings.Contains(u, "required"): // leaving it out is refused too
		return u
	case f.DefValue == "":
		return u + "; or leave it out"
	}
	return fmt.Sprintf("%s; or leave it out, for %s", u, f.DefValue)
}

// once is a flag's value that refuses a second value on the command line:
// pflag keeps the last, and the first then does nothing (--trigger expire
// --trigger ttl ran ttl without a word).
type once struct {
	pflag.Value
	given string // the first value; "" until one is given
	set   bool
}

func (v *once) Set(s string) error {
	if v.set && (v.Type() != "bool" || v.given != s) { // --yes --yes says one thing twice
		return twiceError{v.given, s}
	}
	if err := v.Value.Set(s); err != nil {
		return err
	}
	v.given, v.set = s, true
	return nil
}

// twiceError is a single-valued flag given a second value.
type twiceError struct{ first, second string }

func (e twiceError) Error() string {
	return fmt.Sprintf("given twice, %q and %q (accepted: one value; the second would replace the first)", e.first, e.second)
}

// refuseTwice makes every single-valued flag of fs refuse a second value
// (once): all but the repeatable ones (lists) and those that refuse it
// their own way (--vary). A boolean given twice the same way is one
// value; --dry-run --dry-run=false is refused, not a run.
func refuseTwice(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		_, list := f.Value.(pflag.SliceValue)
		_, vary := f.Value.(*onceString)
		if _, done := f.Value.(*once); done || list || vary || (f.NoOptDefVal != "" && f.Value.Type() != "bool") {
			return
		}
		f.Value = &once{Value: f.Value}
	})
}

// onceString is a string flag given at most once: a second --vary would
// replace the first, which then does nothing.
type onceString string

func (s *onceString) String() string { return string(*s) }
func (s *onceString) Type() string   { return "string" }
func (s *onceString) Set(v string) error {
	if *s != "" {
		return fmt.Errorf("given twice, %q and %q (accepted: one axis to bisect; --grid for a map of two)", string(*s), v)
	}
	*s = onceString(v)
	return nil
}

// oneArg requires exactly one argument, what (a scenario file), and says
// which, with an example, when it is missing or more are given.
func oneArg(cmd, what, example string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("%s: %s is required, %s", cmd, what, example)
		case len(args) > 1:
			return fmt.Errorf("%s: one argument, %s, and %d were given: %s (accepted: one; flags start with --)", cmd, what, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// someArgs requires one argument or more, each what (a results file).
func someArgs(cmd, what, example string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("%s: %s is required, %s", cmd, what, example)
		}
		return nil
	}
}

// acceptedForms are the forms of pflag's value types, for errors.
var acceptedForms = map[string]string{
	"duration": "a duration such as 500ms, 2s or 1m30s", "int": "a whole number", "int32": "a whole number", "uint64": "a whole number",
	"uint32": "a whole number", "float64": "a finite number, such as 0.5", "bool": "true or false",
}

// flagValueError is pflag's error for a value that does not parse (such as
// strconv.ParseInt: parsing "1.5k": invalid syntax) as a problem with the
// flag: the value, the form it takes and what the flag is.
func flagValueError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	fl := bad.GetFlag()
	var empty cli.EmptyError
	if errors.As(err, &empty) {
		return fmt.Errorf("--%s: %w", fl.Name, empty)
	}
	var twice twiceError
	if errors.As(err, &twice) {
		return fmt.Errorf("--%s: %w", fl.Name, twice)
	}
	form, ok := acceptedForms[fl.Value.Type()]
	if !ok {
		return err // the value's own error names its form
	}
	usage := strings.ReplaceAll(fl.Usage, "`", "")
	if outOfRange(bad.GetValue(), fl.Value.Type()) { // a whole number all the same: its bounds are the flag's to tell
		return fmt.Errorf("--%s: %s out of range (accepted: %s: %s)", fl.Name, bad.GetValue(), form, usage)
	}
	return fmt.Errorf("--%s: %q is not %s (accepted: %s: %s)", fl.Name, bad.GetValue(), form, form, usage)
}

// outOfRange says whether v is a whole number that typ (int, int32,
// uint64, uint32) cannot hold: 99999999999 for an int32, -1 for a uint.
func outOfRange(v, typ string) bool {
	if !strings.HasPrefix(typ, "int") && !strings.HasPrefix(typ, "uint") {
		return false
	}
	bits := 64
	if strings.HasSuffix(typ, "32") {
		bits = 32
	}
	_, err := strconv.ParseInt(v, 10, bits)
	if strings.HasPrefix(typ, "uint") && err == nil {
		return true // negative, or it would have parsed
	}
	return errors.Is(err, strconv.ErrRange)
}

// rateValue is --rate: requests per second, written 1000, 1k, 1.5k or
// 2k/s; the range is the plan's to check (plan.MaxRate).
type rateValue struct{ p *int }

func (v rateValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}
func (v rateValue) Type() string { return "rate" }
func (v rateValue) Set(s string) error {
	n, err := herd.ParseCount(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil || n > math.MaxInt32 {
		return badRate(s)
	}
	*v.p = int(n)
	return nil
}

func badRate(s string) error {
	return fmt.Errorf("%q is not a rate (accepted: whole requests per second, such as 500, 1k, 1.5k or 2k/s, 1 to %d)", s, plan.MaxRate)
}
