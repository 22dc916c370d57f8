package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// DefaultAfterMax is how long an arm run with --after auto goes on after T
// at most, when auto names no MAX.
const DefaultAfterMax = time.Minute

// AfterValue is --after as text, for a flag (String, Set, Type: pflag's
// Value): a duration, the fixed window after T; or auto, auto:MAX, which
// sets P.AfterAuto and makes MAX (DefaultAfterMax) P.After, the most.
type AfterValue struct{ P *Plan }

func (v AfterValue) String() string {
	if v.P == nil {
		return ""
	}
	if v.P.AfterAuto {
		return "auto:" + v.P.After.String()
	}
	return v.P.After.String()
}

func (v AfterValue) Set(s string) error {
	rest, auto := strings.CutPrefix(s, "auto")
	if !auto {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is neither a duration such as 8s nor auto or auto:MAX such as auto:30s", s)
		}
		v.P.After, v.P.AfterAuto = herd.Duration(d), false
		return nil
	}
	max := DefaultAfterMax
	if rest != "" {
		m, ok := strings.CutPrefix(rest, ":")
		d, err := time.ParseDuration(m)
		if !ok || err != nil {
			return fmt.Errorf("%q: auto's MAX is not a duration (accepted: auto, or auto:MAX such as auto:30s)", s)
		}
		max = d
	}
	v.P.After, v.P.AfterAuto = herd.Duration(max), true
	return nil
}

func (AfterValue) Type() string { return "duration|auto[:MAX]" }
