package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// nonEmpty is a string flag whose explicit empty value is refused: the
// flag's default is its own, and "" would silently become it, or worse
// (--listen ” listens on every interface).
type nonEmpty struct {
	p        *string
	accepted string // what the flag takes, for the error
}

// nonEmptyVar binds a string flag that refuses "" (accepted: what it takes).
func nonEmptyVar(fs *pflag.FlagSet, p *string, name, value, accepted, usage string) {
	*p = value
	fs.Var(nonEmpty{p, accepted}, name, usage)
}

func (v nonEmpty) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v nonEmpty) Type() string { return "string" }
func (v nonEmpty) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("empty (accepted: %s)", v.accepted)
	}
	*v.p = s
	return nil
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
