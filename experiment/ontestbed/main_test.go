package ontestbed_test

import (
	"os"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/testbed/subject/subjecttest"
)

// Every test here runs in parallel with the others (t.Parallel): each
// waits mostly on its servers' start and its load windows. go test runs
// -parallel of them at once (GOMAXPROCS: two on the project's machine),
// and what they measure takes one of machinelock.Seats, shared with every
// other package's load tests, so the machine is no busier than before;
// the package's tests fill seats that its serial order left empty.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// TriggerOptions is every trigger with its defaults but for the options
// given (subjecttest.TriggerOptions).
var TriggerOptions = subjecttest.TriggerOptions

// startTestbed is a local testbed opened as the engine's subject.
func startTestbed(t testing.TB, replicas int) *subject.Testbed {
	return subjecttest.Subject(t, replicas)
}
