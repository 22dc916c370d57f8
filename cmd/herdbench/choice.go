package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/providers"
)

// given is what the user gave, as the kind --target names reads it
// (plan.Given); base is the replicas' knobs every written arm
// sends, nil when they have problems.
func (o stampedeOptions) given(base herd.Settings) plan.Given {
	defaults := stampedeDefaults
	defaults.Triggers = o.Plan.Triggers
	return plan.Given{Plan: o.Plan, Defaults: defaults, ReadPlan: o.readPlan, PlanSet: o.PlanSet, TriggerSet: o.TriggerSet, Set: o.userSet,
		StartSet: o.TestbedSet, KnobsSet: o.Bed.KnobsSet, Arms: o.Arms, ArmsSet: o.ArmsSet, Scenario: o.Scenario, ScenarioPath: o.ScenarioPath,
		Base: base, SetKnob: setKnob, Abort: o.Abort, Allow: o.AllowHosts}
}

// readPlan reads value as the plan's flag of that name reads it, into p;
// p as it was when the value does not read.
func (o stampedeOptions) readPlan(p plan.Plan, flag, value string) (plan.Plan, error) {
	o.Plan = p
	fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	bindStampedeFlags(fs, &o)
	err := setFlag(fs.Lookup(flag), value) // names the accepted form, as a scenario's value
	return o.Plan, err
}

// startTestbed uses the running testbed, or starts one for the plan as
// the flags say, and stops what it started.
func (o stampedeOptions) startTestbed(ctx context.Context, plan plan.Plan, stderr io.Writer) (*testbed.Running, func(), error) {
	run, err := providers.Default().Ensure(ctx, o.testbed(stderr, plan))
	if err != nil {
		return nil, nil, err
	}
	if !run.Started {
		fmt.Fprintf(stderr, "using the testbed running in %s (left running)\n", run.Status.StateDir)
		testbedcmd.WarnIgnored(stderr, run.Ignored)
	}
	return run, func() { testbedcmd.Stop(ctx, stderr, run) }, nil
}

// open opens the kind --target names once past the dry run (asking
// before a run that leaves loopback, where the kind asks), and hands it to use; it closes, or
// stops, what it opened when use returns.
func (o stampedeOptions) open(ctx context.Context, stderr io.Writer, plan plan.Plan, use func(plan.Opened) error) error {
	g := o.given(nil)
	g.Log = stderr
	g.Confirm = func(tg *targets.Target) error { return confirm(stderr, o, tg, plan) }
	opened, err := o.chosen.Open(ctx, plan, g)
	var told cli.UsageError
	if !errors.As(err, &told) && herd.IsField(err) { // the user's to fix: the testbed's options, a target file's database without grants
		return cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	defer opened.Close()
	return use(opened)
}
