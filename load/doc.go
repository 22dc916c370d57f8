// Package load drives steady open-model traffic with vegeta's library: a
// constant pacer, requests round-robin over the replicas, keys drawn from a
// seeded Zipf distribution.
//
// Guarantees: every request ends in exactly one Outcome, and its Latency is
// counted from its intended send time (start + (seq+1)/rate, as vegeta's
// constant pacer schedules it), not from when the
// generator got around to sending it, so a stall of the server or of the
// generator itself shows in the percentiles instead of being omitted.
package load
