// Package onservice holds the experiment engine's tests that run whole
// experiments on a user's service, as a target file declares it: the
// testbed's replicas as its origin behind nginx and Varnish, its own
// Prometheus series, its drain, Memcached and MariaDB, and the command
// trigger between the arm's hooks. A package of its own, like
// experiment/ontestbed, so that go test runs them beside the engine's
// other tests. It has no code but this comment.
package onservice
