package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// controllerProblems are those of the controller's command line after --:
// stampede or run, without --workers (the manifests set it), its flags
// as the command itself parses them (a flag given twice refused, as on
// the command line), and its target and plan as the stampede checks them.
// A run's scenario file is in the ConfigMap: of a run, only what its
// command line sets is checked, each value alone, since the file may set
// the rest.
func controllerProblems(args, allow []string) herd.FieldErrors {
	var bad herd.FieldErrors
	switch {
	case args[0] != "stampede" && args[0] != "run":
		bad.Add("", "after --: the controller's command %q (accepted: stampede or run, after --)", args[0])
		return bad
	case slices.Contains(args, "--workers") || slices.Contains(args, "--worker-count"):
		bad.Add("", "--workers after --: the manifests set it to the workers' Service (accepted: kube --workers N)")
	}
	opts := newStampedeOptions(io.Discard, triggers.Default)
	c := &cobra.Command{Use: args[0], Args: cli.NoArgs}
	isRun := args[0] == "run"
	if isRun { // its scenario file, as run itself requires it
		c.Args = newRunCmd(io.Discard, io.Discard, triggers.Default).Args
	}
	fs := c.Flags()
	bindStampedeFlags(fs, &opts)
	refuseTwice(fs) // as the root command does for every command line
	if err := c.ParseFlags(args[1:]); err != nil {
		bad.Add("", "after --: %s: %v", args[0], flagValueError(err))
		return bad
	}
	if err := c.Args(c, fs.Args()); err != nil {
		bad.Add("", "after --: %v", cli.UnwrapUsage(err))
		return bad
	}
	if isRun {
		bad = append(bad, inConfigMap("run's scenario file", fs.Arg(0))...)
	}
	return append(bad, controllerChecks(opts, fs, isRun, allow)...)
}

// controllerChecks are the problems of the controller's flags, parsed
// into opts, as stampede's (or run's) own checks find them: its target
// (controllerTarget), the options the stampede drops on a service, and
// its plan; one problem per value, told as the value the user gave.
func controllerChecks(opts stampedeOptions, fs *pflag.FlagSet, isRun bool, allow []string) herd.FieldErrors {
	opts.TestbedSet = changed(fs, startFlags)
	opts.TriggerSet = triggerFlagsSet(fs, opts.Plan)
	opts.PlanSet = planFlagsSet(fs)
	var checked herd.FieldErrors
	var url *targets.Target
	if !isRun || fs.Changed("target") { // a run's may be its scenario's
		url, checked = controllerTarget(opts.Target, allow)
	}
	// a target file's keys: and trigger: are read in the pod
	targetFile := opts.Target != "testbed" && !strings.Contains(opts.Target, "://")
	switch {
	case url != nil: // the testbed's options, a key space without {key}
		_, refused := service.Kind{Svc: url}.Plan(opts.given(nil))
		checked = append(checked, refused...)
	case targetFile:
		checked = append(checked, service.TestbedOnly(opts.given(nil), opts.Target)...)
	}
	checked = append(checked, planProblems(opts, url, !isRun)...)
	checked = append(checked, podOutputs(opts)...)
	var bad herd.FieldErrors
	for _, e := range checked {
		// a run's scenario may set what its command line does not, and
		// the other value of a relation between two
		if !isRun || (e.Other == nil && (e.Field == "" || fs.Changed(cli.FlagOf(e.Field)))) {
			bad = append(bad, e)
		}
	}
	// the trigger the options are for: --trigger's, or else the default,
	// unless a scenario or target file may name its own
	if fs.Changed("trigger") || !(isRun || targetFile) {
		bad = append(bad, idleTriggerOptions(opts.Plan, opts.TriggerSet, bad)...)
	}
	bad = bad.Blame(opts.userSet).FirstPerField()
	// every target a pod reaches is off its loopback (controllerTarget)
	if cmd := "stampede"; !opts.Yes && (isRun || url != nil || targetFile) {
		if isRun {
			cmd = "run"
		}
		bad.Add("yes", "not given after --, and the controller's pod has no terminal to ask on: %s would refuse to send to the target's hosts, which in a pod are never loopback (accepted: --yes after --, once you have read the hosts the plan touches, as %s --dry-run with the same flags prints them)", cmd, cmd)
	}
	return bad
}

// planProblems are those of the plan the controller's flags make, as the
// stampede checks them (buildPlan): the gates, --repeat 0, and the plan's
// validation, against url when --target is one (its trigger among them:
// the default's, when byDefault says no scenario may name another). A
// target file's plan and arms are the ConfigMap's, checked in the pod.
func planProblems(opts stampedeOptions, url *targets.Target, byDefault bool) herd.FieldErrors {
	var bad, problems herd.FieldErrors
	opts.Plan.Gates, problems = gates.ParseAll(opts.Gates, "gates")
	bad = append(bad, problems...)
	opts.Plan.Abort, problems = gates.ParseAll(opts.Abort, "abort_on")
	bad = append(bad, problems...)
	bad = append(bad, zeroRepeat(opts.Plan)...)
	checked := herd.Fields(opts.Plan.Validate())
	if url != nil {
		checked = herd.Fields(opts.Plan.ValidateFor(service.Kind{Svc: url}.Describe()))
		if byDefault && !opts.TriggerSet["trigger"] {
			checked = service.AtURLDefaultTrigger(checked, opts.Plan, url)
		}
	}
	for _, e := range checked {
		if e.Field != "arms" { // a file's, or a URL's baseline, as the pod's run sets them
			bad = append(bad, e)
		}
	}
	return bad
}
