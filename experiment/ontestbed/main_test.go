package ontestbed_test

import (
	"os"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/testbed/subject/subjecttest"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// TriggerOptions is every trigger with its defaults but for the options
// given (subjecttest.TriggerOptions).
var TriggerOptions = subjecttest.TriggerOptions

// startTestbed is a local testbed opened as the engine's subject.
func startTestbed(t testing.TB, replicas int) *subject.Testbed {
	return subjecttest.Subject(t, replicas)
}
