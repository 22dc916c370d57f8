package main

import (
	"context"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/kube"
	"github.com/herdbench/herdbench/triggers"
)

// controllerProblems are those of the controller's command line after --:
// stampede or run, without --workers (the manifests set it), its flags
// as the command itself parses them (a flag given twice refused, as on
// the command line), and its target and plan as the stampede checks them.
// A run's scenario file is in the ConfigMap: of a run, only what its
// command line sets is checked, each value alone, since the file may set
// the rest.
func controllerProblems(s kube.Spec) herd.FieldErrors {
	args := s.Args
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
	return append(bad, controllerChecks(opts, fs, isRun, s)...)
}

// controllerChecks are the problems of the controller's flags, parsed
// into opts: the stampede's own (prepare, the path stampede, run and
// sweep share), on the subject its pod will name (inPod), and the outputs
// its pod cannot write; one problem per value, told as the value the user
// gave.
func controllerChecks(opts stampedeOptions, fs *pflag.FlagSet, isRun bool, s kube.Spec) herd.FieldErrors {
	opts.TestbedSet = changed(fs, startFlags)
	opts.ArmsSet = fs.Changed("arms")
	opts.TriggerSet = triggerFlagsSet(fs, opts.Plan)
	opts.PlanSet = planFlagsSet(fs)
	opts.DryRun = true // nothing is contacted: the pod opens the target
	opts.kinds = []kindOf{podKind(isRun, fs, s.AllowHosts)}
	// the workers as the manifests give them; their token is the Secret's
	opts.Workers, opts.podToken = s.WorkersAddr(), true
	// the pod's directories, not this machine's (podOutputs checks them)
	results := opts.ResultsDir
	opts.StateDir, opts.ResultsDir = "", ""
	_, _, err := prepare(context.Background(), &opts, nil)
	bad := herd.Fields(cli.UnwrapUsage(err))
	opts.ResultsDir = results
	bad = append(bad, podOutputs(opts)...)
	// every target a pod reaches is off its loopback (controllerTarget)
	if cmd := "stampede"; !opts.Yes && (isRun || opts.Target != "testbed") {
		if isRun {
			cmd = "run"
		}
		bad.Add("yes", "not given after --, and the controller's pod has no terminal to ask on: %s would refuse to send to the target's hosts, which in a pod are never loopback (accepted: --yes after --, once you have read the hosts the plan touches, as %s --dry-run with the same flags prints them)", cmd, cmd)
	}
	return bad
}

// without is bad but the problems of drop, told alike.
func without(bad, drop herd.FieldErrors) herd.FieldErrors {
	var out herd.FieldErrors
	for _, e := range bad {
		if !slices.ContainsFunc(drop, func(d *herd.FieldError) bool { return d.Error() == e.Error() }) {
			out = append(out, e)
		}
	}
	return out
}
