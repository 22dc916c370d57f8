// Package reporters renders an experiment's Report: the terminal table and
// the results JSON file. They only format; every figure comes from the
// Report as measured.
//
// Metrics are the harness' own live Prometheus metrics, which a stampede
// serves on loopback (--metrics-addr) while it runs: requests by outcome,
// latency from the intended send time, attempts, and the trigger instant,
// labelled by arm and phase only.
package reporters
