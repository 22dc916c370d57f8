// Package local runs the testbed as plain processes on loopback, the
// embedded default that needs no Docker: the stores the replicas use
// (testbed/store: Redis, their cache and their database, each started as
// it says) from the machine's binaries on free ports in a state
// directory, an embedded toxiproxy server with one proxy per dependency,
// and the API replicas as separate OS processes of the herdbench binary
// (`herdbench testbed serve`), which reach their cache and database
// through the proxies so triggers can break real TCP.
//
// The process that calls Start is the testbed's supervisor: it owns every
// child and Stop tears them all down. `herdbench testbed up` runs a detached
// supervisor and hands its readiness back through Notify and AwaitReady.
// A state file lets Status and Down work from another process.
//
// Guarantees: Start returns only when every part answers, or tears down what
// it started and names the failed part and its log; no child outlives Stop,
// Down, or the supervisor (children get SIGKILL when it dies, on Linux).
package local
