package api

import (
	"math"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// xfetchStrategy is probabilistic early recomputation (Vattani,
// Chierichetti, Lowenstein, VLDB 2015): a hit recomputes when
// now - delta*beta*ln(rand()) >= expiry.
type xfetchStrategy replica.XFetchKnobs

var _ HitRefresher = xfetchStrategy{}

// RefreshHit loads before expiry when the draw says so; a failed load
// serves the hit, whose value is still valid.
func (x xfetchStrategy) RefreshHit(r *Request, e Entry) (Item, string, bool) {
	u := 1 - r.Random() // (0, 1], so ln(u) is finite
	now := float64(time.Now().UnixMilli())
	if now-e.DeltaMS*x.Beta*math.Log(u) < float64(e.ExpiryMS) {
		return Item{}, "", false
	}
	r.v.m.earlyLoads.Inc()
	if it, err := r.Load(); err == nil {
		return it, admin.OutcomeEarly, true
	}
	return Item{}, "", false
}
