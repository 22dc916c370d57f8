// Package load drives steady open-model traffic: a constant schedule (hit k
// due at start + (k+1)/rate, as vegeta's constant pacer has it), requests
// round-robin over the replicas, keys drawn from a seeded Zipf
// distribution. Its workers wait for each hit's instant, send it through
// the herd's clients (retries, budgets, hedging, breakers) and record it
// themselves (attack.go); vegeta's attacker did that with a hand-off per
// step, which cost more CPU than the requests.
//
// Guarantees: every request ends in exactly one Outcome, and its Latency is
// counted from its intended send time, not from when the generator got
// around to sending it, so a stall of the server or of the generator
// itself shows in the percentiles instead of being omitted.
package load
