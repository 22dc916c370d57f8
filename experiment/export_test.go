package experiment

import (
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/triggers"
)

// What the tests that run on the testbed need of the package's insides:
// they are package experiment_test, as the testbed's subject
// (testbed/subject) imports this package.
var (
	HeldBy  = result.HeldBy
	PhaseOf = phaseOf
	FmtF    = fmtF
)

// TriggerOptions is triggerOptions, for the external tests.
func TriggerOptions(kv ...string) *triggers.Registry { return triggerOptions(kv...) }
