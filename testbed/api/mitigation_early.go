package api

import (
	"context"

	"github.com/herdbench/herdbench/testbed/replica"
)

// earlyStrategy refreshes in the background on a fixed share of hits.
type earlyStrategy replica.EarlyKnobs

var _ HitRefresher = earlyStrategy{}

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
