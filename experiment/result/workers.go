package result

import (
	"github.com/herdbench/herdbench/triggers"
)

// Workers is how the workers of a distributed arm kept one herd.
type Workers struct {
	Count int `json:"count"`
	// StartSkewMaxMS is the spread of the workers' first requests against
	// the schedule (their departure, less the instant due, on worker 0's
	// clock: max - min); StartSkewP99MS its 99th percentile over workers.
	StartSkewMaxMS float64  `json:"start_skew_max_ms"`
	StartSkewP99MS float64  `json:"start_skew_p99_ms"`
	Each           []Worker `json:"each"`
	// Burst is the burst the workers released, merged: the arm's burst
	Burst *triggers.BurstResult `json:"-"`
}

// Worker is one worker's part of an arm.
type Worker struct {
	Index int    `json:"index"`
	URL   string `json:"url"`
	// ClockOffsetMS is the worker's clock less worker 0's, measured as NTP
	// does before the arm; ClockErrorMS bounds it (half the round trip).
	ClockOffsetMS float64 `json:"clock_offset_ms"`
	ClockErrorMS  float64 `json:"clock_error_ms"`
	// FirstLagMS is how late its first request left against the instant
	// it was due, on its own clock.
	FirstLagMS float64     `json:"first_lag_ms"`
	Load       LoadFigures `json:"load"`            // its generator's own figures
	Burst      int         `json:"burst,omitempty"` // the burst trigger's clients it released
	// PastCut is how many requests it sent past the arm's cut, which
	// reached it after its instant: not in the arm's figures
	PastCut int64 `json:"past_cut,omitempty"`
}
