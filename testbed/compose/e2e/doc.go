// Package e2e runs the docker compose testbed on a real Docker Engine, end
// to end, as a user runs it: `testbed up --provider docker`, status and
// down; the default stampede and the invariants its figures keep; every
// trigger the docker provider supports, checked in the servers' own
// counters; Ctrl-C during up and during a stampede; and a CI gate on a
// service that herdbench did not start. It holds only tests: they skip on a
// machine without Docker and fail when CI is set (composetest.Require).
package e2e
