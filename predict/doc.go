// Package predict puts the model (package model) beside the
// measurement: it maps a run's plan and results to the model's inputs,
// in one place (Of), and sets each swept arm's predicted tipping point
// beside the one the sweep measured (Sweep), predicts each arm of a
// results file for the fault it ran (Results, for herdbench model), and
// sets that prediction beside each arm's verdict after a slowdb run
// (Expect: arms[].model).
//
// The mapping covers the testbed's retry storm: a slowdb fault on the
// replicas' database pools, plain cache-aside whose loads run on once
// their client gave up, clients with a timeout, retries (none,
// immediate, exp, full jitter) and a ratio budget. An arm outside it
// (adaptive throttling, a client breaker, hedging, a token budget,
// another backoff, a mitigation, a second tier, a cache that answers
// most attempts, a service whose pools herdbench does not run) is
// refused with a note saying why, never given a number
// (docs/metastability.md, "The model beside the sweep").
//
// Guarantees: every input the model is given is listed with its source,
// a figure of the sweep's runs or a setting of its plan or the
// testbed's; a refusal is a Refusal, and the sweep's output says it; a
// figure a results file lacks is named with the run that measures it.
package predict
