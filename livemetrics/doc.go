// Package livemetrics is the harness' own live Prometheus metrics, which a
// stampede serves on loopback (--metrics-addr) while it runs, and the
// bundled dashboards read: requests by outcome, latency from the intended
// send time, attempts, the trigger instant, a target's request classes
// and its load balancer, labelled by arm and phase, class or server only
// (never a URL or a key).
//
// Families lists every family NewMetrics registers, so a dashboard is
// checked against what the harness exports, not a copied list. A family
// of something a run did not measure has no series: a dashboard shows no
// data, never a zero.
//
//	reg := prometheus.NewRegistry()
//	env := experiment.Env{..., Observer: livemetrics.NewMetrics(reg)}
//
// Guarantees: every figure is counted from what experiment.Run shows its
// Observer (the clients' records, the workers' bins, the sampler's
// readings of HAProxy), the same records the results count.
package livemetrics
