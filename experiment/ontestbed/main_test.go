package ontestbed_test

import (
	"os"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/testbed/subject/subjecttest"
	"github.com/herdbench/herdbench/triggers"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// TriggerOptions is every trigger with its defaults but for the options
// given, key then value, as a flag would set them.
func TriggerOptions(kv ...string) *triggers.Registry {
	reg := triggers.Default()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := reg.Set(kv[i], kv[i+1]); err != nil {
			panic(err)
		}
	}
	return reg
}

// startTestbed is a local testbed opened as the engine's subject.
func startTestbed(t testing.TB, replicas int) *subject.Testbed {
	return subjecttest.Subject(t, replicas)
}
