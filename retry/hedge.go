package retry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Hedge is a hedging policy (Dean and Barroso, "The Tail at Scale", CACM
// 2013): when an attempt has not answered after Delay, the client sends a
// copy to another replica and takes the first good answer. It hedges only
// while its own error rate over the last HedgeWindow stays below
// MaxErrorRate: a failing service is an overloaded one, and hedging into it
// doubles the herd. The zero Hedge is off.
type Hedge struct {
	Delay        time.Duration
	MaxErrorRate float64 // (0, 1]
}

// DefaultHedgeMaxErrorRate is MaxErrorRate when the short form leaves it out.
const DefaultHedgeMaxErrorRate = 0.1

// HedgeWindow is how far back a client counts its error rate.
const HedgeWindow = windowLen

// HedgeForms lists the accepted forms of a hedge, for help text and errors.
var HedgeForms = []string{"none", "a delay such as 50ms", "DELAY:RATE such as 50ms:10% to hedge only while under that error rate (default 10%)"}

var hedgeAccepted = "accepted: " + strings.Join(HedgeForms, ", ")

// ParseHedge reads "none", "50ms" or "50ms:10%".
func ParseHedge(s string) (Hedge, error) {
	if s == "" || s == None {
		return Hedge{}, nil
	}
	ds, rs, hasRate := strings.Cut(s, ":")
	d, err := time.ParseDuration(ds)
	if err != nil || d <= 0 || d > time.Minute {
		return Hedge{}, fmt.Errorf("hedge %q: delay %q is not a duration above 0 and at most 1m (%s)", s, ds, hedgeAccepted)
	}
	h := Hedge{Delay: d, MaxErrorRate: DefaultHedgeMaxErrorRate}
	if hasRate {
		v, err := strconv.ParseFloat(strings.TrimSuffix(rs, "%"), 64)
		if err != nil || !strings.HasSuffix(rs, "%") || !(v > 0 && v <= 100) {
			return Hedge{}, fmt.Errorf("hedge %q: error rate %q is not a percentage above 0%% and at most 100%% (%s)", s, rs, hedgeAccepted)
		}
		h.MaxErrorRate = v / 100
	}
	return h, nil
}

// String is the short form, which ParseHedge reads back.
func (h Hedge) String() string {
	if h.Delay == 0 {
		return None
	}
	return h.Delay.String() + ":" + strconv.FormatFloat(h.MaxErrorRate*100, 'g', -1, 64) + "%"
}

// MarshalText writes the short form.
func (h Hedge) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads the short form.
func (h *Hedge) UnmarshalText(b []byte) error {
	v, err := ParseHedge(string(b))
	*h = v
	return err
}

// Hedger is one client's hedging gate: it counts the client's attempts and
// failures over HedgeWindow. It is not safe for concurrent use.
type Hedger struct {
	h      Hedge
	recent window // attempts (a) and failures (b)
}

// NewHedger returns the gate of h.
func NewHedger(h Hedge) *Hedger { return &Hedger{h: h} }

// Allow says whether an attempt at now may be hedged.
func (g *Hedger) Allow(now time.Time) bool {
	attempts, failures := g.recent.sum(now)
	return attempts == 0 || float64(failures) < g.h.MaxErrorRate*float64(attempts)
}

// Done records an attempt that ended at now.
func (g *Hedger) Done(now time.Time, failed bool) {
	f := 0
	if failed {
		f = 1
	}
	g.recent.add(now, 1, f)
}
