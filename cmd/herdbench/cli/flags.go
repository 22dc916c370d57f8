package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// nonEmpty is a string flag whose explicit empty value is refused: the
// flag's default is its own, and "" would silently become it, or worse
// (--listen "" listens on every interface).
type nonEmpty struct {
	p        *string
	accepted string // what the flag takes, for the error
}

// NonEmptyVar binds a string flag that refuses "" (accepted: what it takes).
func NonEmptyVar(fs *pflag.FlagSet, p *string, name, value, accepted, usage string) {
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
		return EmptyError{Accepted: v.accepted}
	}
	*v.p = s
	return nil
}

// EmptyError is an explicitly empty value, and what the flag or key takes.
type EmptyError struct{ Accepted string }

func (e EmptyError) Error() string { return "empty (accepted: " + e.Accepted + ")" }

// FlagOf is the flag that sets a field of the plan or of the replicas'
// config: --hot-keys for hot_keys. The one field named apart from its
// flag is the plan's gates, which --gate adds to one at a time.
func FlagOf(field string) string {
	if field == "gates" {
		return "gate"
	}
	return strings.ReplaceAll(field, "_", "-")
}
