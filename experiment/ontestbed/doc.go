// Package ontestbed holds the experiment engine's longest tests, those
// that run whole experiments on the bundled testbed and the servers beside
// it (triggers, MariaDB, Memcached, HTTP caches, write herds, the escape
// load, a call chain): a package of their own so that go test runs them beside the
// engine's other tests, each package within its 10-minute limit. It has no
// code but this comment.
package ontestbed
