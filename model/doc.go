// Package model predicts a herd's dynamics from the figures a run
// measures: whether a fault of a given magnitude tips a service into a
// stuck state, the shortest fault that tips it, how long the service
// takes to come back after a fault that does not, and the escape load
// of one that does.
//
// It holds three models, each pure computation (no clock, no I/O; the
// one that draws keys draws them from a seed it is given, so every
// function is a function of its arguments):
//
//   - Fluid (fluid.go, predict.go): the attempts in flight as a
//     deterministic flow, stepped every 10 ms. A Service serves them
//     (a FIFO pool of Workers, each held by its attempt until the reply,
//     Work later, that gives up a wait longer than its Deadline and then
//     completes only Stuck a second; or, Brooker's, a server whose
//     latency grows with the attempts in flight), Clients send them (an
//     offered Rate, a Timeout, Retries with an optional backoff and full
//     jitter, a retry budget), and a Fault slows the service's replies
//     (held until the fault ends at the latest, as slowdb's toxic holds
//     them) or raises the rate for a while. Predict answers the four
//     questions, reading "back" by the verdict's band (reading.go), as
//     the measured recovery_ms it is set beside is read. This is the
//     model herdbench puts beside its measurements: it solves the
//     testbed's sizes (hundreds of requests a second, thousands in
//     flight) in milliseconds.
//   - Chain (ctmc.go): Metafor's continuous-time Markov chain of one
//     server's queue and its clients' orbit of retries (Derakhshan,
//     Majumdar et al., mpi-sws-rse/metafor), its stationary
//     distribution and expected hitting times, solved exactly by a
//     banded LU. It reproduces Metafor's published figures and shows
//     what noise does near the boundary, where the fluid model is
//     deterministic; its state space (queue × orbit) is too large for
//     the testbed's sizes, which is why the fluid model is the one
//     herdbench predicts with (docs/metastability.md, "The model").
//   - LookAside (lookaside.go, lookaside_verdict.go): the look-aside
//     cache's herd, the testbed's cache-aside replicas under the expire
//     trigger, run one request at a time: keys drawn from Zipf(s) with a
//     seeded source, each replica's FIFO pool of db_pool connections,
//     loads that die with their requests (abandoned_load: canceled) or
//     run on, and the strategies none, singleflight and lock. Each run
//     is judged by the verdict's rule of results v2, as a sweep's probe
//     is; TippingPoint bisects the hot keys that tip it
//     (BenchmarkLookAsideTippingPoint: 0.31 to 0.41 s at 2,000 req/s).
//
// Guarantees: every function is a function of its arguments; a bad
// input (a capacity of 0, a negative rate) is an error naming the
// field, never a default; Predict finishes in well under a second for
// the testbed's sizes (BenchmarkPredict).
package model
