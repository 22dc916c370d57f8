package api

import (
	"time"

	"github.com/herdbench/herdbench/herd"
)

// jitterStrategy adds a random fraction of the TTL on every set, so keys
// cached together do not expire together.
type jitterStrategy struct {
	Fraction float64 `json:"ttl_jitter" help:"fraction of the TTL added at random by ttl_jitter, 0 to 1"`
}

var _ TTLAdjuster = jitterStrategy{}

func (jitterStrategy) Name() string     { return TTLJitter }
func (jitterStrategy) Describe() string { return "random fraction of the TTL added on every set" }
func (jitterStrategy) Kind() string     { return KindTTL }

func (j jitterStrategy) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(j.Fraction) || j.Fraction < 0 || j.Fraction > 1 {
		errs.Add("ttl_jitter", "%g out of range (accepted: 0 to 1, a fraction of ttl)", j.Fraction)
	}
	return errs
}

// AdjustTTL adds up to the fraction of ttl.
func (j jitterStrategy) AdjustTTL(r *Request, ttl time.Duration) time.Duration {
	return ttl + time.Duration(r.Random()*j.Fraction*float64(ttl))
}
