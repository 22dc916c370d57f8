// Package load drives steady open-model traffic with vegeta's attacker
// (github.com/tsenart/vegeta/v12/lib): a constant schedule (hit k due at
// start + (k+1)/rate, vegeta's constant pacer anchored on the caller's
// start, or every Nth hit of it for one stripe of several generators;
// Steps lower its rate at instants set while it runs, each request's
// instant still a function of its number) as its Pacer, keys drawn from a seeded distribution and requests round-robin
// over the replicas as its Targeter, and the herd's virtual clients
// (retries, budgets, adaptive throttling, hedging, breakers) as the
// RoundTripper of its http.Client, over net/http's Transport. One vegeta
// hit is one request, its attempts inside.
//
// What herdbench adds on top of vegeta's results is the accounting:
// every request ends in exactly one Outcome, also those the generator owed
// and never sent (Unsent); and its Latency is counted from its intended
// send time on the schedule, not from when the generator got around to
// sending it (vegeta's Timestamp), so a stall of the server or of the
// generator itself shows in the percentiles instead of being omitted.
package load
