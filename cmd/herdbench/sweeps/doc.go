// Package sweeps holds the herdbench binary's sweeps: a real server with
// a known tipping point (it latches) bracketed, its gates, its dry run,
// bad input and Ctrl-C; and on the local testbed a look-aside cache's
// tipping point found and found again with another seed, the model's
// prediction beside a measured tip, and --escape's load for each stuck
// probe. They are apart from cmd/herdbench's tests so that
// go test runs them beside those (docs/performance.md, "The suite's
// budgets"). It holds only tests: they skip without the testbed's servers
// and fail when CI is set.
package sweeps
