package api

import (
	"math"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
)

// xfetchStrategy is probabilistic early recomputation (Vattani,
// Chierichetti, Lowenstein, VLDB 2015): a hit recomputes when
// now - delta*beta*ln(rand()) >= expiry.
type xfetchStrategy struct {
	Beta float64 `json:"xfetch_beta" help:"xfetch's beta (greater than 0); larger recomputes earlier"`
}

var _ HitRefresher = xfetchStrategy{}

func (xfetchStrategy) Name() string { return XFetch }
func (xfetchStrategy) Describe() string {
	return "probabilistic early recomputation (Vattani et al. 2015)"
}
func (xfetchStrategy) Kind() string           { return KindRefresh }
func (xfetchStrategy) ExclusiveGroup() string { return KindLoader }

func (x xfetchStrategy) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(x.Beta) || x.Beta <= 0 {
		errs.Add("xfetch_beta", "%g out of range (accepted: greater than 0; 1 is the paper's default)", x.Beta)
	}
	return errs
}

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
