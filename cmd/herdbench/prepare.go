package main

import (
	"context"
	"net/url"
	"slices"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// prepare is every check stampede, run and sweep make before anything
// starts, the one path they share: --target resolved once, the plan built
// from the options and checked on that target, then more of it (a sweep's
// range), the testbed's own problems beside the plan's (every problem at
// once), the live metrics' address, a service's hosts. What it refuses is
// a usage error (exit 2). Then a dry run describes the plan, or
// openTarget runs it.
func prepare(ctx context.Context, opts *stampedeOptions, more func(experiment.Plan) error) (experiment.Plan, []output, error) {
	bedErr, err := opts.resolveTarget(ctx)
	if err != nil {
		return experiment.Plan{}, nil, err
	}
	plan, outs, err := buildPlan(*opts) // the plan's own problems first: they name flags
	if err == nil && more != nil {
		err = more(plan)
	}
	if bad := testbedProblems(bedErr); len(bad) > 0 { // with the plan's: every problem at once
		return plan, nil, usageError{withTestbed(herd.Fields(unwrapUsage(err)), bad)}
	}
	if err != nil {
		return plan, nil, err
	}
	if bedErr != nil {
		return plan, nil, testbedError(bedErr)
	}
	if opts.MetricsAddr != "" {
		if err := reporters.CheckLoopback(opts.MetricsAddr); err != nil {
			return plan, nil, usageErrorf("--metrics-addr: %v", err)
		}
	}
	if err := probeHost(plan, opts); err != nil {
		return plan, nil, err
	}
	if svc := opts.service; svc != nil {
		if err := svc.CheckHosts(opts.AllowHosts); err != nil {
			return plan, nil, usageError{err}
		}
	}
	return plan, outs, nil
}

// probeHost holds the command trigger's end probe (--ended-when) to the
// hosts a run may touch: on a service, it is one of the target's hosts,
// checked with the rest; on the testbed, loopback or --allow-host.
func probeHost(plan experiment.Plan, opts *stampedeOptions) error {
	t, err := plan.Triggers.Get(plan.Trigger)
	if lp, ok := t.(triggers.LBEndProber); ok && err == nil {
		if server, on := lp.EndServer(); on && (opts.service == nil || opts.service.HAProxy == nil) {
			return usageErrorf("--ended-when: lb:%s reads the load balancer's stats, and the target has none (accepted: a URL; or lb:SERVER with a target file's haproxy:)", server)
		}
	}
	p, ok := t.(triggers.EndProber)
	if err != nil || !ok || p.EndProbe() == "" {
		return nil
	}
	if svc := opts.service; svc != nil {
		svc.AddHost(p.EndProbe(), "--ended-when")
		return nil
	}
	u, err := url.Parse(p.EndProbe())
	if err != nil {
		return nil // the trigger's own check named it
	}
	if h := u.Hostname(); !targets.Loopback(h) && !slices.Contains(opts.AllowHosts, h) {
		return usageErrorf("--ended-when: host %s is not loopback and not allowed (accepted: loopback, or --allow-host %s)", h, h)
	}
	return nil
}
