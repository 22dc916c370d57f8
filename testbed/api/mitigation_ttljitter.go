package api

import (
	"time"

	"github.com/herdbench/herdbench/testbed/replica"
)

// jitterStrategy adds a random fraction of the TTL on every set, so keys
// cached together do not expire together.
type jitterStrategy replica.TTLJitterKnobs

var _ TTLAdjuster = jitterStrategy{}

// AdjustTTL adds up to the fraction of ttl.
func (j jitterStrategy) AdjustTTL(r *Request, ttl time.Duration) time.Duration {
	return ttl + time.Duration(r.Random()*j.Fraction*float64(ttl))
}
