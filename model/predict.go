package model

import (
	"time"
)

// Options bound a prediction.
type Options struct {
	// Lead is how long the service runs before the fault, to settle in
	// its healthy state
	Lead time.Duration
	// Horizon is how long after the fault's end the model watches: a
	// service not back within it tipped (the sweep's --after auto:MAX)
	Horizon time.Duration
	// MaxFault is the longest fault ShortestTip looks at
	MaxFault time.Duration
	// Band: the verdict's rule for back (reading.go), by which the
	// recovery after the fault's end is read
	Band Band
	// EscapeAfter is how long after the fault's end a stuck service's
	// load is cut, for its escape load
	EscapeAfter time.Duration
	// DBPerAttempt is the database's queries an attempt before the
	// fault, as a run measures it (db.baseline_qps over
	// windows.before.attempts_rps: the cache answers the others): the
	// verdict's band is around the database's q/s before the fault,
	// while the pool drains a backlog at its capacity, whatever the
	// cache; 0: every attempt a query
	DBPerAttempt float64
}

// DefaultOptions are the sweeps' of docs/metastability.md: 3 s before
// the fault, 20 s after it, faults up to 8 s, the verdict's band, the
// load cut 10 s after the fault.
var DefaultOptions = Options{Lead: 3 * time.Second, Horizon: 20 * time.Second, MaxFault: 8 * time.Second,
	Band: VerdictBand, EscapeAfter: 10 * time.Second}

// Prediction is what the model says of a fault.
type Prediction struct {
	// Tips: the service is not back within the horizon after the fault
	Tips bool `json:"tips"`
	// RecoveryMS: from the fault's end until the goodput is back in
	// band for good; nil when it tips
	RecoveryMS *int64 `json:"recovery_ms"`
	// ShortestTipMS: the shortest fault of the same kind that tips it,
	// to 10 ms; nil when none up to MaxFault does
	ShortestTipMS *int64 `json:"shortest_tip_ms"`
	// EscapeRate: the highest offered rate (to 1% of the clients' rate)
	// at which the service, stuck after the shortest tipping fault, comes
	// back; nil when none tips or none down to 1% escapes
	EscapeRate *float64 `json:"escape_rps"`
	// BandLow, BandHigh: Bronson et al.'s queueing condition, a second
	// stable state possible when BandLow < rate < BandHigh:
	// capacity / (1 + retries) and capacity (a pool's; 0 for Brooker's)
	BandLow  float64 `json:"band_low_rps"`
	BandHigh float64 `json:"band_high_rps"`
}

// Predict answers the four questions for fault f.
func Predict(s Service, c Clients, f Fault, o Options) (Prediction, error) {
	if err := Check(s, c, f); err != nil {
		return Prediction{}, err
	}
	var p Prediction
	p.BandHigh = s.Capacity()
	p.BandLow = p.BandHigh / float64(1+c.Retries)
	back, ok := recovery(run{s: s, c: c, f: f, lead: o.Lead, tail: o.Horizon}.Run(), o)
	p.Tips = !ok
	if ok {
		ms := back.Milliseconds()
		p.RecoveryMS = &ms
	}
	tip, found := ShortestTip(s, c, f, o)
	if found {
		ms := tip.Milliseconds()
		p.ShortestTipMS = &ms
		tipped := f
		tipped.Duration = max(tip, f.Duration)
		if r, ok := EscapeRate(s, c, tipped, o); ok {
			p.EscapeRate = &r
		}
	}
	return p, nil
}

// Tips says whether fault f tips the service, and when not, how long
// after the fault's end it is back.
func Tips(s Service, c Clients, f Fault, o Options) (tips bool, back time.Duration) {
	back, ok := recovery(run{s: s, c: c, f: f, lead: o.Lead, tail: o.Horizon}.Run(), o)
	return !ok, back
}

// ShortestTip bisects the fault's duration, to one Step, for the
// shortest that tips the service; false when none up to o.MaxFault does.
func ShortestTip(s Service, c Clients, f Fault, o Options) (time.Duration, bool) {
	at := func(d time.Duration) bool {
		g := f
		g.Duration = d
		tips, _ := Tips(s, c, g, o)
		return tips
	}
	lo, hi := time.Duration(0), o.MaxFault
	if !at(hi) {
		return 0, false
	}
	for hi-lo > Step {
		m := (lo + hi) / 2
		m -= m % Step
		if m <= lo {
			break
		}
		if at(m) {
			hi = m
		} else {
			lo = m
		}
	}
	return hi, true
}

// EscapeRate is the highest offered rate, to 1% of the clients', at
// which the service stuck after fault f comes back when the load falls
// to it o.EscapeAfter after the fault's end; false when f does not tip
// it or no rate down to 1% brings it back.
func EscapeRate(s Service, c Clients, f Fault, o Options) (float64, bool) {
	back := func(rate float64) bool {
		r := run{s: s, c: c, f: f, lead: o.Lead, tail: o.EscapeAfter + o.Horizon}
		r.escapeAt = steps(o.Lead+f.Duration+o.EscapeAfter) + 1
		r.escapeRate = rate
		_, ok := recovery(r.Run(), o)
		return ok
	}
	if tips, _ := Tips(s, c, f, o); !tips || !back(c.Rate/100) {
		return 0, false
	}
	lo, hi := 1, 100 // percent: lo comes back, hi (the clients' rate) does not
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if back(c.Rate * float64(m) / 100) {
			lo = m
		} else {
			hi = m
		}
	}
	return c.Rate * float64(lo) / 100, true
}
