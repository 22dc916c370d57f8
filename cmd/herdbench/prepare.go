package main

import (
	"context"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/livemetrics"
)

// prepare is every check stampede, run and sweep make before anything
// starts, the one path they share: --target resolved once, the plan built
// from the options and checked on that target, then more of it (a sweep's
// range), the testbed's own problems beside the plan's (every problem at
// once), the live metrics' address, a service's hosts. What it refuses is
// a usage error (exit 2). Then a dry run describes the plan, or
// the chosen target opens to run it.
func prepare(ctx context.Context, opts *stampedeOptions, more func(plan.Plan) error) (plan.Plan, []output, error) {
	if opts.chosen == nil { // a scenario file's run resolved it as it read the file
		var err error
		if opts.bedErr, err = opts.resolveTarget(ctx); err != nil {
			return plan.Plan{}, nil, err
		}
	}
	bedErr := opts.bedErr
	plan, outs, err := buildPlan(*opts) // the plan's own problems first: they name flags
	if err == nil && more != nil {
		err = more(plan)
	}
	if bad := testbedProblems(bedErr, *opts); len(bad) > 0 { // with the plan's: every problem at once
		return plan, nil, cli.UsageError{Err: withTestbed(herd.Fields(cli.UnwrapUsage(err)), bad)}
	}
	if err != nil {
		return plan, nil, err
	}
	if bedErr != nil {
		return plan, nil, testbedcmd.StartError(bedErr)
	}
	return plan, outs, nil
}

// reachProblems are where the run would send or listen that it may not:
// a metrics address beyond loopback, a host neither loopback nor allowed.
// Told with the plan's, so that a scenario's are at their lines.
func reachProblems(plan plan.Plan, opts stampedeOptions) herd.FieldErrors {
	var bad herd.FieldErrors
	if opts.MetricsAddr != "" {
		if err := livemetrics.CheckLoopback(opts.MetricsAddr); err != nil {
			bad = append(bad, fieldErr("metrics_addr", err))
		}
	}
	if opts.chosen != nil {
		bad = append(bad, herd.Fields(opts.chosen.Hosts(plan, opts.given(nil)))...)
	}
	return bad
}

// zeroRepeat refuses --repeat 0: the plan's zero is once, and a user's 0
// a mistake (above the cap: the plan's Validate).
func zeroRepeat(p plan.Plan) herd.FieldErrors {
	var bad herd.FieldErrors
	if p.Repeat == 0 {
		bad.Add("repeat", "0 out of range (accepted: 1 to %d runs of each arm)", plan.MaxRepeat)
	}
	return bad
}
