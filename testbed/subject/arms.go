package subject

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
)

// ArmKinds are the arms the testbed reads: the clients' (every subject's),
// its replicas' write strategy (write=queue), and one kind per key of its
// edges' policy (edge-timeout, edge-retry, edge-breaker, ...: edge.Keys).
var ArmKinds = arm.ClientKinds.With(testbedKinds()...)

func testbedKinds() []arm.ArmKind {
	kinds := []arm.ArmKind{{Key: "write", Example: "queue", Set: setWrite}}
	examples := map[string]string{"breaker": "5:2s"}
	for _, k := range edge.Keys {
		kinds = append(kinds, arm.ArmKind{Key: "edge-" + strings.ReplaceAll(k, "_", "-"), Example: examples[k], Set: func(a *arm.Arm, v string) error {
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
func setWrite(a *arm.Arm, v string) error {
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
func CheckArm(a arm.Arm) []error {
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
func (Checker) CheckArm(a arm.Arm) []error { return CheckArm(a) }

// CheckArm is CheckArm, and an edge arm on a testbed without edges.
func (s *Testbed) CheckArm(a arm.Arm) []error {
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

// ScenarioArms builds a scenario file's arms on the base knobs, its
// arms' own knobs set by set (the command line owns their flags), with every
// problem at once, each at its file:line: all of the file's arms, or with
// names (--arms) those it names, in its order, as --arms picks a target
// file's arms. A name that is none of the file's arms is read as --arms
// reads it (a strategy or a client arm); one that is neither is refused,
// naming the file's arms.
func ScenarioArms(path string, f *scenario.File, base herd.Settings, names []string, set arm.KnobSetter) ([]arm.Arm, herd.FieldErrors) {
	picks := make([]int, len(f.Arms)) // indexes in f.Arms; -1: a name the file does not have
	for i := range picks {
		picks[i] = i
	}
	if names != nil {
		picks = picks[:0]
		for _, n := range names {
			picks = append(picks, slices.IndexFunc(f.Arms, func(a scenario.Arm) bool { return a.Name == n }))
		}
	}
	var arms []arm.Arm
	var errs herd.FieldErrors
	for j, i := range picks {
		if i < 0 {
			a, problems := notInFile(path, f, base, names[j])
			if a != nil {
				arms = append(arms, *a)
			}
			errs = append(errs, problems...)
			continue
		}
		a, problems := fileArm(path, f, i, base, set)
		arms = append(arms, a)
		errs = append(errs, problems...)
	}
	return arms, errs
}

// fileArm is the file's arm i, as ArmKinds.Parse reads it. A named
// arm's config (one with a strategy of its own) is checked here, with its
// place; arms read as --arms are checked by the plan.
func fileArm(path string, f *scenario.File, i int, base herd.Settings, setKnob arm.KnobSetter) (arm.Arm, herd.FieldErrors) {
	fa := f.Arms[i]
	spec := arm.ArmSpec{Name: fa.Name, Strategy: fa.Strategy}
	for _, s := range fa.Settings(f) {
		spec.Settings = append(spec.Settings, arm.ArmSetting{Key: s.Flag, Value: s.Values[0], File: path, Line: s.Line, Field: s.Path})
	}
	arms, errs := ArmKinds.Parse([]arm.ArmSpec{spec}, base, setKnob)
	a := arms[0]
	cfg, _ := replica.DefaultConfig.Patched(a.Knobs) // every value came through its knob's flag
	// set by the arm, or for every arm
	set := func(field string) bool {
		return base.Sets(field) || slices.ContainsFunc(fa.Settings(f), func(s scenario.Setting) bool { return s.Flag == strings.ReplaceAll(field, "_", "-") })
	}
	if problems := cfg.Problems().Blame(set); len(problems) > 0 && fa.Strategy != nil && len(errs) == 0 {
		for _, e := range problems {
			errs = append(errs, &herd.FieldError{File: path, Line: fa.Line, Field: fa.Path(), Msg: e.Error(), Err: e})
		}
		a.Knobs = base.With("strategy", replica.None) // reported once
	}
	return a, errs
}

// notInFile is the arm --arms names that the scenario file does not have:
// read as --arms reads it, or nil and a problem naming the file's arms.
func notInFile(path string, f *scenario.File, base herd.Settings, name string) (*arm.Arm, herd.FieldErrors) {
	arms, errs := ArmKinds.Parse(arm.NameSpecs([]string{name}), base, nil)
	cfg, _ := replica.DefaultConfig.Patched(arms[0].Knobs)
	if len(errs) > 0 || !errors.Is(cfg.Validate(), replica.ErrUnknownStrategy) {
		return &arms[0], errs
	}
	declared := make([]string, len(f.Arms))
	for i, a := range f.Arms {
		declared[i] = a.Name
	}
	return nil, herd.FieldErrors{{Field: "arms", Elem: name, Msg: fmt.Sprintf(
		"not an arm of %s (accepted: its arms %s; a strategy, such as lock or lock+ttl_jitter; or a client arm, such as %s)",
		path, strings.Join(declared, ", "), arm.ClientKinds.Examples()[0])}}
}
