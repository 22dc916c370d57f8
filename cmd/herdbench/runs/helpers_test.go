package runs

import (
	"os"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// The tests drive the built binary (clitest), as cmd/herdbench's do.
//
// The tests that measure run in parallel (t.Parallel), as
// experiment/ontestbed's do: each waits mostly on its servers and its load
// windows, go test runs -parallel of them at once (GOMAXPROCS: two on the
// project's machine), and what each measures takes one of
// machinelock.Seats, shared with every other package's load tests, so the
// machine is no busier than before and the package no longer runs its
// longest tests one after another.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }
