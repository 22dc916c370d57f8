// Package runs holds the longest whole runs of the herdbench binary that
// are not sweeps: every example scenario on one local testbed, the
// cascade example, --escape from the command line to every report, a
// target behind a real HAProxy (its retries tied to HAProxy's own log, a
// returning server's step and ramp to its stats page), and docs/ci.md's
// nginx gate in front of the testbed's replicas.
// They are apart from cmd/herdbench's tests so that go test runs them
// beside those (docs/performance.md, "The suite's budgets"). It holds only
// tests: they skip without the testbed's servers and fail when CI is set.
package runs
