package experiment

import (
	"context"
	"time"

	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// What the tests that run on the testbed need of the package's insides:
// they are package experiment_test, as the testbed's subject
// (testbed/subject) imports this package.
var (
	HeldBy  = heldBy
	PhaseOf = phaseOf
	FmtF    = fmtF
)

// ServiceDrainWithin is a service subject's Drain on tg, giving up after
// limit rather than DrainLimit.
func ServiceDrainWithin(tg *targets.Target, limit time.Duration) func(context.Context) error {
	return (&serviceSubject{tg: tg, limit: limit}).Drain
}

// TriggerOptions is triggerOptions, for the external tests.
func TriggerOptions(kv ...string) *triggers.Registry { return triggerOptions(kv...) }
