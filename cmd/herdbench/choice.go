package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/providers"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// choice is what --target names, resolved once (resolveTarget) before
// anything starts: a service herdbench does not control (a target file or
// a base URL: serviceChoice) or the bundled testbed (testbedChoice). Each
// kind answers for itself what stampede, run and sweep would otherwise
// ask with "is this the testbed?", in the order prepare asks it.
type choice interface {
	// plan is opts' plan with what the target declares of it (a target
	// file's plan:), and the options it would drop without a word refused.
	plan(opts stampedeOptions) (experiment.Plan, herd.FieldErrors)
	// arms sets the plan's arms (and a target file's trigger) as the
	// target takes them; base is the replicas' knobs every arm sends, nil
	// when they have problems (told once, not with every arm).
	arms(plan experiment.Plan, opts stampedeOptions, base admin.Patch) (experiment.Plan, herd.FieldErrors)
	// problems are bad's, placed where the target's own file said them.
	problems(plan experiment.Plan, opts stampedeOptions, bad herd.FieldErrors) herd.FieldErrors
	// describe is what the plan is checked and dry-run against: the
	// target and its subject, without contacting either.
	describe() (*targets.Target, experiment.Subject)
	// hosts refuses a host the run would touch and may not: the end
	// probe's, the target's own.
	hosts(plan experiment.Plan, opts stampedeOptions) error
	// open opens the target once past the dry run and hands it to use,
	// with the testbed's status (nil for a service); it closes, or stops,
	// what it opened when use returns.
	open(ctx context.Context, stderr io.Writer, opts stampedeOptions, plan experiment.Plan, use useFunc) error
}

// useFunc runs the plan on an open target.
type useFunc func(tg *targets.Target, sub experiment.Subject, st *testbed.Status) error

// serviceChoice is a service --target names: a target file or a base URL.
type serviceChoice struct{ svc *targets.Target }

func (c serviceChoice) plan(opts stampedeOptions) (experiment.Plan, herd.FieldErrors) {
	plan, bad := targetPlan(opts, c.svc)
	return plan, append(bad, notForTarget(opts, c.svc)...)
}

func (c serviceChoice) arms(plan experiment.Plan, opts stampedeOptions, _ admin.Patch) (experiment.Plan, herd.FieldErrors) {
	plan, bad := targetTrigger(plan, c.svc, opts.TriggerSet)
	plan, err := servicePlan(plan, c.svc, opts)
	return plan, append(bad, herd.Fields(err)...)
}

func (c serviceChoice) problems(plan experiment.Plan, opts stampedeOptions, bad herd.FieldErrors) herd.FieldErrors {
	bad = atFileTrigger(atFilePlanOther(bad, c.svc, opts), plan, c.svc, opts.TriggerSet)
	bad = atFileDuration(bad, c.svc, opts.PlanSet)
	return atFileAbort(atFilePlan(bad, c.svc, opts.PlanSet), c.svc, opts.Abort)
}

func (c serviceChoice) describe() (*targets.Target, experiment.Subject) {
	return c.svc, experiment.ServiceSubject(c.svc)
}

// hosts: the end probe is one of the service's hosts, checked with the
// rest against --allow-host.
func (c serviceChoice) hosts(plan experiment.Plan, opts stampedeOptions) error {
	if server, on := lbEndServer(plan); on && c.svc.HAProxy == nil {
		return noLoadBalancer(server)
	}
	if probe := endProbe(plan); probe != "" {
		c.svc.AddHost(probe, "--ended-when")
	}
	if err := c.svc.CheckHosts(opts.AllowHosts); err != nil {
		return usageError{err}
	}
	return nil
}

// open confirms a run that leaves loopback and connects to the service.
func (c serviceChoice) open(ctx context.Context, stderr io.Writer, opts stampedeOptions, plan experiment.Plan, use useFunc) error {
	if err := confirm(stderr, opts, c.svc, plan); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := c.svc.Connect(cctx)
	cancel()
	if herd.IsField(err) { // the target file's to fix: performance_schema off, a user without grants
		return usageError{err}
	}
	if err != nil {
		return err
	}
	defer c.svc.Close()
	return use(c.svc, experiment.ServiceSubject(c.svc), nil)
}

// testbedChoice is the bundled testbed: the one running in --state-dir,
// or the one the run would start (testbedToUse).
type testbedChoice struct{ bed *subject.Testbed }

func (testbedChoice) plan(opts stampedeOptions) (experiment.Plan, herd.FieldErrors) {
	return opts.Plan, nil
}

// arms are a scenario file's (--arms picks of them), or else --arms'
// specs, over the knobs every arm sends.
func (testbedChoice) arms(plan experiment.Plan, opts stampedeOptions, base admin.Patch) (experiment.Plan, herd.FieldErrors) {
	var bad herd.FieldErrors
	if sc := opts.Scenario; sc != nil && len(sc.Arms) > 0 {
		var names []string
		if opts.ArmsSet {
			names = opts.Arms
		}
		plan.Arms, bad = scenarioArms(opts.ScenarioPath, sc, base, names)
		return plan, bad
	}
	plan.Arms, bad = subject.ArmKinds.Parse(experiment.NameSpecs(opts.Arms), base, nil)
	return plan, bad
}

func (testbedChoice) problems(_ experiment.Plan, _ stampedeOptions, bad herd.FieldErrors) herd.FieldErrors {
	return bad
}

// describe: bed is never nil once resolveTarget made the choice
// (testbedToUse describes one from the flags even when it cannot be had).
func (c testbedChoice) describe() (*targets.Target, experiment.Subject) {
	return c.bed.Target, c.bed
}

// hosts: the end probe is loopback or an --allow-host; the testbed has no
// load balancer of its own to read.
func (testbedChoice) hosts(plan experiment.Plan, opts stampedeOptions) error {
	if server, on := lbEndServer(plan); on {
		return noLoadBalancer(server)
	}
	probe := endProbe(plan)
	if probe == "" {
		return nil
	}
	u, err := url.Parse(probe)
	if err != nil {
		return nil // the trigger's own check named it
	}
	if h := u.Hostname(); !targets.Loopback(h) && !targets.Allowed(h, opts.AllowHosts) {
		return usageErrorf("--ended-when: host %s is not loopback and not allowed (accepted: loopback, or --allow-host %s)", h, h)
	}
	return nil
}

// open uses the running testbed, or starts one for the run and stops it
// after.
func (testbedChoice) open(ctx context.Context, stderr io.Writer, opts stampedeOptions, plan experiment.Plan, use useFunc) error {
	run, err := providers.Default().Ensure(ctx, opts.testbed(stderr, plan))
	if err != nil {
		return testbedError(err)
	}
	defer stopTestbed(ctx, stderr, run)
	if !run.Started {
		fmt.Fprintf(stderr, "using the testbed running in %s (left running)\n", run.Status.StateDir)
		warnIgnored(stderr, run.Ignored)
	}
	bed, err := subject.Open(ctx, run.Status, run.Restarter())
	if err != nil {
		return err
	}
	defer bed.Close()
	return use(bed.Target, bed, &run.Status)
}

// noLoadBalancer refuses an end probe on a load balancer's server where
// the target declares no load balancer.
func noLoadBalancer(server string) error {
	return usageErrorf("--ended-when: lb:%s reads the load balancer's stats, and the target has none (accepted: a URL; or lb:SERVER with a target file's haproxy:)", server)
}

// lbEndServer is the server the command trigger's end probe waits for
// behind the load balancer (--ended-when lb:SERVER), if it names one.
func lbEndServer(plan experiment.Plan) (string, bool) {
	t, err := plan.Triggers.Get(plan.Trigger)
	if lp, ok := t.(triggers.LBEndProber); ok && err == nil {
		return lp.EndServer()
	}
	return "", false
}

// endProbe is the URL the command trigger's end probe polls
// (--ended-when URL); "" when it has none.
func endProbe(plan experiment.Plan) string {
	t, err := plan.Triggers.Get(plan.Trigger)
	if p, ok := t.(triggers.EndProber); ok && err == nil {
		return p.EndProbe()
	}
	return ""
}
