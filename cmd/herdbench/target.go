package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/api"
)

// describeTarget reads --target without contacting anything: nil for the
// testbed, else the service a target file or a base URL names.
func describeTarget(spec string) (*targets.Target, error) {
	switch {
	case spec == "" || spec == "testbed":
		return nil, nil
	case strings.HasPrefix(spec, "http://"), strings.HasPrefix(spec, "https://"):
		tg, err := targets.FromURL(spec)
		if err != nil {
			return nil, usageError{fmt.Errorf("--target: %w", err)}
		}
		return tg, nil
	}
	f, err := targets.ReadFile(spec)
	if f == nil {
		return nil, usageError{fmt.Errorf("--target: %w (accepted: testbed, a target file, or a base URL such as http://127.0.0.1:8080/items/{key})", err)}
	}
	if err != nil {
		return nil, usageError{err}
	}
	return targets.FromFile(f), nil
}

// servicePlan fits the plan to a service herdbench does not control: its
// arms are selected on the service (by name from the target file), or
// are client arms; its key space and stop conditions are the file's; its
// caps bound the plan.
func servicePlan(plan *experiment.Plan, svc *targets.Target, opts stampedeOptions) []error {
	var bad []error
	names := opts.Arms
	switch sc := opts.Scenario; {
	case opts.ArmsSet:
	case sc != nil && len(sc.Arms) > 0:
		// a scenario's arms name the target file's; their knobs and
		// strategies are the testbed's, which a service does not take
		names = nil
		for i, a := range sc.Arms {
			if a.Strategy != nil || len(a.Settings(sc, i)) > 0 {
				bad = append(bad, fmt.Errorf("%s:%d: arms[%d] (%s): a strategy, knobs or client policies of its own, for %s, which herdbench does not control (accepted: the name of one of its arms, %s, baseline, or a client arm such as %s)",
					opts.ScenarioPath, a.Line, i, a.Name, svc.Name, strings.Join(svcArmNames(svc), ", "), experiment.ClientArms[0]))
			}
			names = append(names, a.Name)
		}
	default:
		names = svcArmNames(svc)
		if len(names) == 0 {
			names = []string{"baseline"} // the service as it is
		}
	}
	declared := svcArmNames(svc)
	for _, n := range names {
		arm := experiment.Arm{Name: n, Select: &experiment.Select{}}
		switch spec, found := findArm(svc, n); {
		case found:
			arm.Select = &experiment.Select{Headers: spec.Headers, Query: spec.Query, Before: spec.Before, After: spec.After}
		case n == "baseline":
		default:
			client := experiment.Arms([]string{n}, api.Config{})[0]
			if client.Retry == nil && client.Throttle == nil && client.Hedge == nil && client.Breaker == nil {
				bad = append(bad, fmt.Errorf("--arms: %q is not an arm of %s (accepted: %s, baseline, or a client policy: %s)",
					n, svc.Name, strings.Join(declared, ", "), strings.Join(experiment.ClientArms, ", ")))
				continue
			}
			arm.Retry, arm.Throttle, arm.Hedge, arm.Breaker = client.Retry, client.Throttle, client.Hedge, client.Breaker
		}
		plan.Arms = append(plan.Arms, arm)
	}
	if svc.Space != nil {
		plan.Keys = int(min(svc.Space.Size(), int64(1<<31-1)))
		plan.HotKeys = len(svc.Hot(plan.HotKeys))
	}
	for i, s := range svc.Abort {
		g, err := gates.Parse(s)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s:%d: abort[%d]: %w", svc.Name, fileLine(svc, fmt.Sprintf("abort[%d]", i)), i, err))
			continue
		}
		plan.Abort = append(plan.Abort, g)
	}
	if err := svc.CheckLimits(plan.Load()); err != nil {
		bad = append(bad, err)
	}
	// a figure the target does not let herdbench observe is null: a gate
	// or a stop condition on it could never mean anything
	unobserved := func(path string) string {
		c := svc.Caps()
		switch {
		case strings.HasPrefix(path, "db.") && (svc.File() == nil || svc.File().Postgres == nil):
			return "postgres"
		case strings.HasPrefix(path, "cache.") && !c.Redis:
			return "redis"
		case strings.HasPrefix(path, "api."):
			return "the testbed's replicas"
		}
		return ""
	}
	for _, set := range []struct {
		flag string
		gs   []gates.Gate
	}{{"--gate", plan.Gates}, {"--abort-on", plan.Abort}} {
		flag := set.flag
		for _, g := range set.gs {
			if what := unobserved(g.Path); what != "" {
				bad = append(bad, fmt.Errorf("%s: %q: %s names %s, which %s does not let herdbench observe (accepted: a path of what it declares; %s would need %s in the target file)",
					flag, g.Expr, g.Path, what, svc.Name, g.Path, what))
			}
		}
	}
	return bad
}

func svcArmNames(svc *targets.Target) []string {
	names := make([]string, len(svc.Arms))
	for i, a := range svc.Arms {
		names[i] = a.Name
	}
	return names
}

func findArm(svc *targets.Target, name string) (targets.ArmSpec, bool) {
	for _, a := range svc.Arms {
		if a.Name == name {
			return a, true
		}
	}
	return targets.ArmSpec{}, false
}

func fileLine(svc *targets.Target, path string) int {
	if f := svc.File(); f != nil {
		return f.Line(path)
	}
	return 0
}

// confirm asks before a run touches hosts that are not loopback, unless
// --yes; without a terminal to ask on, it refuses.
func confirm(stderr io.Writer, opts stampedeOptions, svc *targets.Target, plan experiment.Plan) error {
	hosts := svc.NonLoopback()
	if len(hosts) == 0 || opts.Yes {
		return nil
	}
	arms := fmt.Sprintf("%d arms", len(plan.Arms))
	if len(plan.Arms) == 1 {
		arms = "1 arm"
	}
	what := fmt.Sprintf("%d req/s for %s of %s each (trigger %s) against %s", plan.Rate, arms, plan.Duration(), plan.Trigger, strings.Join(hosts, ", "))
	if !opts.InTTY {
		return usageErrorf("--yes: not given, and there is no terminal to ask on: refusing to send %s (accepted: --yes, or --dry-run to see the plan)", what)
	}
	fmt.Fprintf(stderr, "About to send %s.\nProceed? [y/N] ", what)
	line, _ := bufio.NewReader(opts.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return errors.New("not confirmed: nothing was sent")
	}
	return nil
}

// runService runs the plan against a service herdbench does not control.
func runService(ctx context.Context, stdout, stderr io.Writer, opts stampedeOptions, svc *targets.Target, plan experiment.Plan, outs []output) error {
	if err := svc.CheckHosts(opts.AllowHosts); err != nil {
		return usageError{err}
	}
	if opts.DryRun {
		return reporters.DryRun(stdout, experiment.Describe(plan, svc))
	}
	if err := confirm(stderr, opts, svc, plan); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := svc.Connect(cctx)
	cancel()
	if err != nil {
		return err
	}
	defer svc.Close()
	return runAndReport(ctx, stdout, stderr, opts, svc, plan, outs, nil)
}
