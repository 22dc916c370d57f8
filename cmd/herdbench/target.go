package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/providers"
	"github.com/herdbench/herdbench/testbed/subject"
)

// kindOf is a kind of subject --target may name: the kind, when it names
// it (nil: another's), or --target's own problem. bedErr says why the kind
// cannot be had as asked, to be told with the plan's problems.
type kindOf func(ctx context.Context, o stampedeOptions) (k plan.Kind, bedErr, err error)

// kinds are the kinds --target names, each asked in turn: a service, a
// target file or a base URL, last, as it reads anything else as a file.
var kinds = []kindOf{testbedKind, serviceKind}

// resolveTarget reads --target once, without contacting anything, into
// o.chosen, the kind of subject of o.kinds it names. bedErr and err are
// the kind's (kindOf); err leaves o.chosen nil.
func (o *stampedeOptions) resolveTarget(ctx context.Context) (bedErr, err error) {
	for _, of := range o.kinds {
		var k plan.Kind
		if k, bedErr, err = of(ctx, *o); err != nil || k != nil {
			o.chosen = k
			return bedErr, err
		}
	}
	return nil, nil
}

// serviceKind is the service a target file or a base URL names.
func serviceKind(_ context.Context, o stampedeOptions) (plan.Kind, error, error) {
	svc, err := serviceOf(o.Target, o.DryRun)
	if err != nil {
		return nil, nil, err
	}
	return service.Kind{Svc: svc}, nil, nil
}

// testbedKind is the testbed the run will use (testbedToUse), when
// --target names it.
func testbedKind(ctx context.Context, o stampedeOptions) (plan.Kind, error, error) {
	if o.Target != "" && o.Target != "testbed" {
		return nil, nil, nil
	}
	bed, bedErr := testbedToUse(ctx, o)
	return subject.Kind{Bed: bed, Start: o.startTestbed}, bedErr, nil
}

// serviceOf is the service --target names, a target file or a base URL.
// For a dry run, a target file's ${VAR}
// that is not set is needed at run time, not a problem.
func serviceOf(spec string, dryRun bool) (*targets.Target, error) {
	if strings.Contains(spec, "://") { // a URL, of a scheme FromURL may refuse, not a file
		tg, err := targets.FromURL(spec)
		if err != nil {
			return nil, cli.UsageError{Err: fieldErr("target", err)}
		}
		return tg, nil
	}
	read := targets.ReadFile
	if dryRun {
		read = targets.ReadFileForDryRun
	}
	f, err := read(spec)
	if f == nil && !herd.IsField(err) { // a file --target could not read: perhaps no file was meant
		return nil, cli.UsageError{Err: herd.Errorf("target", "%v (accepted: testbed, a target file, or a base URL such as http://127.0.0.1:8080/items/{key})", err)}
	}
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	return targets.FromFile(f), nil
}

// testbedToUse describes, without connecting to it or starting it, the
// testbed a run on --target testbed uses (testbed.Registry.Preview, the
// checks Ensure makes): the one running in --state-dir, or else the one
// the run would start, as its flags say (its tiers, its replicas). Its plan
// is checked against it (an edge arm needs two tiers) and a dry run shows
// it. When the testbed cannot be had as asked, the error says why and the
// target is the one the flags describe, so the plan is still checked.
func testbedToUse(ctx context.Context, opts stampedeOptions) (*subject.Testbed, error) {
	run, err := providers.Default().Preview(ctx, opts.testbed(io.Discard, opts.Plan))
	if err != nil {
		provider := opts.Bed.Provider
		if provider == testbed.Auto {
			provider = "local" // what auto picks where the programs are
		}
		run = &testbed.Running{Status: testbed.Status{Provider: provider, StateDir: opts.StateDir, Items: opts.Bed.Items}, Started: true}
	}
	st := run.Status
	if !run.Started {
		tg := subject.Describe(st)
		tg.Grants.Restarter = run.Restarter()
		tg.Name = fmt.Sprintf("the testbed running in %s", st.StateDir)
		return tg, nil
	}
	for i := range opts.Bed.Replicas {
		st.API = append(st.API, fmt.Sprintf("http://127.0.0.1:PORT%d", i+1))
		if opts.Bed.Tiers == testbed.TwoTiers {
			st.Edge = append(st.Edge, fmt.Sprintf("http://127.0.0.1:EDGE%d", i+1))
		}
	}
	tg := subject.Describe(st)
	if run.Provider != nil { // its parts will restart as the started testbed's do
		tg.Grants.Restarter = run.Restarter()
	}
	tiers := "one tier"
	if len(st.Edge) > 0 {
		tiers = "edge replicas in front"
	}
	tg.Name = fmt.Sprintf("the %s testbed the run would start in %s (%d replicas, %d items, %s)", st.Provider, opts.StateDir, len(st.API), st.Items, tiers)
	return tg, testbedcmd.WithComposeFile(err, st.Provider, opts.Bed.ComposeFile)
}

// target is what the plan is checked and dry-run against, with its
// subject; nil when --target could not be resolved.
func (o stampedeOptions) target() (*targets.Target, plan.Subject) {
	if o.chosen == nil {
		return nil, nil
	}
	return o.chosen.Describe()
}

// confirm asks before a run touches hosts that are not loopback, unless
// --yes; without a terminal to ask on, it refuses.
func confirm(stderr io.Writer, opts stampedeOptions, svc *targets.Target, plan plan.Plan) error {
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
		return cli.UsageErrorf("--yes: not given, and there is no terminal to ask on: refusing to send %s (accepted: --yes, or --dry-run to see the plan)", what)
	}
	fmt.Fprintf(stderr, "About to send %s.\nProceed? [y/N] ", what)
	line, _ := bufio.NewReader(opts.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return errors.New("not confirmed: nothing was sent")
	}
	return nil
}

// hostProblems are those of the hosts --allow-host gives.
func hostProblems(hosts []string) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, h := range hosts {
		if err := targets.CheckHost(h); err != nil {
			bad = append(bad, &herd.FieldError{Field: "allow_host", Msg: err.Error()})
		}
	}
	return bad
}
