// Package stores holds a rule, and the test that keeps it: each kind of
// store herdbench touches is one package under stores/ (redis, memcached,
// postgres, mysql for MySQL and MariaDB), the only one that imports its
// driver; the testbed's API server, the service under test, keeps its own.
// A store package opens its store, reads its counters into an
// observe.Sample (observe.DB, Cache, Streams), acts on it as triggers ask
// (triggers.Cache, Expirer, Broadcaster, Pauser, ConnKiller) and asks its
// version, how a starting server is seen to answer. The interfaces are
// the engine's: neither observe nor triggers names a store.
package stores
