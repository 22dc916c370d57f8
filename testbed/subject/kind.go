package subject

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
)

// Kind is the bundled testbed as a kind of subject (plan.Kind): the
// one running, or the one a run would start, as Bed describes it. Its
// arms are written ones (a strategy, knobs, client policies); its plan is
// the command line's.
type Kind struct {
	Bed *Testbed
	// Start uses the running testbed, or starts one for the plan, as the
	// command line's flags say; stop stops what it started
	// (log: where it says what it does)
	Start func(ctx context.Context, p plan.Plan, log io.Writer) (run *testbed.Running, stop func(), err error)
}

var _ plan.Kind = Kind{}

func (Kind) Plan(g plan.Given) (plan.Plan, herd.FieldErrors) { return g.Plan, nil }

// Arms are the arms as written: a scenario file's (--arms picks of
// them), or else --arms' specs, over the knobs every arm sends.
func (Kind) Arms(p plan.Plan, g plan.Given) (plan.Plan, herd.FieldErrors) {
	var bad herd.FieldErrors
	if sc := g.Scenario; sc != nil && len(sc.Arms) > 0 {
		var names []string
		if g.ArmsSet {
			names = g.Arms
		}
		p.Arms, bad = ScenarioArms(g.ScenarioPath, sc, g.Base, names, g.SetKnob)
		return p, bad
	}
	p.Arms, bad = ArmKinds.Parse(arm.NameSpecs(g.Arms), g.Base, nil)
	return p, bad
}

func (Kind) Problems(_ plan.Plan, _ plan.Given, bad herd.FieldErrors) herd.FieldErrors {
	return bad
}

// Describe: Bed is never nil once the command line resolved the kind (it
// describes one from the flags even when it cannot be had).
func (k Kind) Describe() (*targets.Target, plan.Subject) { return k.Bed.Target, k.Bed }

// Hosts: the end probe is loopback or an --allow-host; the testbed has no
// load balancer of its own to read.
func (Kind) Hosts(p plan.Plan, g plan.Given) error {
	if server, on := p.LBEndServer(); on {
		return plan.NoLoadBalancer(server)
	}
	probe := p.EndProbe()
	if probe == "" {
		return nil
	}
	u, err := url.Parse(probe)
	if err != nil {
		return nil // the trigger's own check named it
	}
	if h := u.Hostname(); !targets.Loopback(h) && !targets.Allowed(h, g.Allow) {
		return fmt.Errorf("--ended-when: host %s is not loopback and not allowed (accepted: loopback, or --allow-host %s)", h, h)
	}
	return nil
}

// Local: the testbed listens on this machine's loopback.
func (Kind) Local() string { return "the testbed" }

// Open uses the running testbed, or starts one for the run, stopped when
// the run closes it.
func (k Kind) Open(ctx context.Context, p plan.Plan, g plan.Given) (plan.Opened, error) {
	run, stop, err := k.Start(ctx, p, g.Log)
	if err != nil {
		return plan.Opened{}, err
	}
	bed, err := Open(ctx, run.Status, run.Restarter())
	if err != nil {
		stop()
		return plan.Opened{}, err
	}
	return plan.Opened{Target: bed.Target, Subject: bed, Harness: run.Status.Harness, Prometheus: run.Status.Prometheus,
		Close: func() { bed.Close(); stop() }}, nil
}
