package arm

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/herdbench/herdbench/herd"
)

// SameSubject says whether a and o set the same of the subject: their
// knobs (no strategy read as none, the base's), edge policy and
// selection.
func SameSubject(a, o Arm) bool {
	strategyOf := func(x Arm) herd.Settings {
		if _, ok := x.Knobs["strategy"]; ok {
			return x.Knobs
		}
		return x.Knobs.With("strategy", noneStrategy)
	}
	sameEdge := len(a.Edge) == 0 && len(o.Edge) == 0 || sameSettings(a.Edge, o.Edge)
	sameSelect := !a.Select.sets() && !o.Select.sets() || a.Select.same(o.Select)
	return sameEdge && sameSelect && sameSettings(strategyOf(a), strategyOf(o))
}

// sameSettings says whether a and b set the same names to the same JSON.
func sameSettings(a, b herd.Settings) bool {
	return (a == nil) == (b == nil) && maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// same says whether s and o select alike: the same headers, query,
// commands, endpoints and backend.
func (s *Select) same(o *Select) bool {
	if s == nil || o == nil {
		return s == o
	}
	return maps.Equal(s.Headers, o.Headers) && maps.Equal(s.Query, o.Query) && slices.Equal(s.Before, o.Before) &&
		slices.Equal(s.After, o.After) && slices.Equal(s.Secret, o.Secret) && slices.Equal(s.Endpoints, o.Endpoints) && s.Backend == o.Backend
}

// noneStrategy is the strategy that mitigates nothing, which an arm with
// no strategy of its own keeps from the base.
const noneStrategy = "none"

// SetsClients says whether a sets any of the clients' policies.
func (a Arm) SetsClients() bool {
	return a.Retry != nil || a.Throttle != nil || a.Hedge != nil || a.Breaker != nil || a.Budget != nil
}

// sets says whether s selects an arm on a service at all.
func (s *Select) sets() bool {
	return s != nil && (len(s.Headers) > 0 || len(s.Query) > 0 || len(s.Before) > 0 || len(s.After) > 0 || len(s.Endpoints) > 0 || s.Backend != "")
}
