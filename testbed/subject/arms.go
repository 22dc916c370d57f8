package subject

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
)

// ArmKinds are the arms the testbed reads: the clients' (every subject's),
// its replicas' write strategy (write=queue), and one kind per key of its
// edges' policy (edge-timeout, edge-retry, edge-breaker, ...: edge.Keys).
var ArmKinds = experiment.ClientKinds.With(testbedKinds()...)

func testbedKinds() []experiment.ArmKind {
	kinds := []experiment.ArmKind{{Key: "write", Example: "queue", Set: setWrite}}
	examples := map[string]string{"breaker": "5:2s"}
	for _, k := range edge.Keys {
		kinds = append(kinds, experiment.ArmKind{Key: "edge-" + strings.ReplaceAll(k, "_", "-"), Example: examples[k], Set: func(a *experiment.Arm, v string) error {
			var p edge.Patch
			if err := a.Edge.Decode(&p); err != nil {
				return err
			}
			if err := p.Set(k, v); err != nil {
				return err
			}
			a.Edge = herd.SettingsOf(p)
			return nil
		}})
	}
	return kinds
}

// setWrite sets the replicas' write strategy (write_strategy) in the arm.
func setWrite(a *experiment.Arm, v string) error {
	if !slices.Contains(replica.WriteStrategies, v) {
		return fmt.Errorf("write strategy %q (accepted: %s)", v, strings.Join(replica.WriteStrategies, ", "))
	}
	a.Knobs = a.Knobs.With("write_strategy", v)
	return nil
}

// CheckArm is every problem of what a sets of the testbed, with no
// testbed at hand: its edge policy as the edges check it, and its knobs
// and strategy as a replica checks them. A service's arm (one chosen by
// Select) sets nothing of it.
func CheckArm(a experiment.Arm) []error {
	var errs []error
	var ep edge.Patch
	if len(a.Edge) > 0 && a.Edge.Decode(&ep) == nil {
		for _, e := range ep.Problems() {
			errs = append(errs, fmt.Errorf("edge %w", e))
		}
	}
	if a.Select != nil {
		return errs
	}
	cfg, err := replica.DefaultConfig.Patched(a.Knobs)
	if err != nil {
		return append(errs, err)
	}
	for _, e := range cfg.Problems() {
		if errors.Is(e, replica.ErrUnknownStrategy) {
			errs = append(errs, fmt.Errorf("%w; or a client policy: %s", e, strings.Join(ArmKinds.Examples(), ", ")))
			continue
		}
		errs = append(errs, e)
	}
	return errs
}

// Checker checks arms for a testbed not at hand (a dry run whose testbed
// could not be read): CheckArm.
type Checker struct{}

// CheckArm is CheckArm.
func (Checker) CheckArm(a experiment.Arm) []error { return CheckArm(a) }

// CheckArm is CheckArm, and an edge arm on a testbed without edges.
func (s *Testbed) CheckArm(a experiment.Arm) []error {
	errs := CheckArm(a)
	if len(a.Edge) > 0 && s.Edges == nil {
		errs = append(errs, fmt.Errorf("sets the edge replicas' policy, and %s has no edge tier (accepted: a testbed started with --tiers 2, by testbed up or by the run)", s.Name))
	}
	return errs
}

// Knobs are the replicas' knobs as a scenario file sets them: mits' (nil:
// the bundled mitigations'), each with its flag's type, values and help.
func Knobs(mits *replica.Mitigations) []scenario.Knob {
	if mits == nil {
		mits = replica.DefaultMitigations()
	}
	var out []scenario.Knob
	for _, k := range mits.Knobs() {
		out = append(out, scenario.Knob{Name: k.Name, Type: k.Type(), Enum: k.Enum, Help: k.Help})
	}
	return out
}
