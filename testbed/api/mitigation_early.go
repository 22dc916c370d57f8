package api

import (
	"context"

	"github.com/herdbench/herdbench/herd"
)

// earlyStrategy refreshes in the background on a fixed share of hits.
type earlyStrategy struct {
	Probability float64 `json:"early_probability" help:"early: chance of a background refresh on each hit, 0 to 1"`
}

var _ HitRefresher = earlyStrategy{}

func (earlyStrategy) Name() string { return Early }
func (earlyStrategy) Describe() string {
	return "a fixed probability of background refresh on each hit"
}
func (earlyStrategy) Kind() string           { return KindRefresh }
func (earlyStrategy) ExclusiveGroup() string { return KindLoader }

func (e earlyStrategy) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(e.Probability) || e.Probability < 0 || e.Probability > 1 {
		errs.Add("early_probability", "%g out of range (accepted: 0 to 1)", e.Probability)
	}
	return errs
}

// RefreshHit starts a background load on a share of hits; the hit is
// served.
func (e earlyStrategy) RefreshHit(r *Request, _ Entry) (Item, string, bool) {
	if r.Random() < e.Probability {
		r.v.m.earlyLoads.Inc()
		bg := *r
		bg.ctx = context.Background()
		r.s.background(func() { _, _ = bg.Load() })
	}
	return Item{}, "", false
}
