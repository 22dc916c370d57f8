// Package admin is the testbed's wire contract: what travels between the
// harness and a replica of the testbed's API (and an edge replica, which
// speaks the same admin endpoints), and the one client that speaks it.
// The endpoints' paths, the bodies of /admin/fill, /admin/reset and
// /healthz, a patch of the run-time config, the headers a request may
// carry, the values of X-Cache, and the replicas' metric names with the
// Counters read by them are declared here; the server (package
// testbed/api) and the edge role (testbed/edge) answer by these names, and
// the harness (testbed/subject, the providers) calls through Client and
// Fleet.
//
// The run-time config travels as JSON: its knobs are the server's (its
// mitigations' tagged fields), so this package passes it on as
// json.RawMessage and whoever knows the knobs decodes it.
//
// Guarantees: the package imports only the standard library and
// package herd (TestAdminImportsOnlyTheStandardLibraryAndHerd), so a
// harness package that talks to the replicas does not take in the
// server's dependencies; Counters are read from /metrics by the names the
// server registers, so a rename on one side shows as a zero in the
// server's test (testbed/api's TestClientReadsTheServersCounters); an
// answer outside 2xx is an error carrying the server's own words.
package admin
