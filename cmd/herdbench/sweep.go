package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/predict"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// sweepOptions are the stampede's (its --gate read as gates on tipping
// points) and the sweep's own.
type sweepOptions struct {
	stampedeOptions
	Vary     string
	Grid     []string
	Settings sweep.Settings
	// Given are the flags the command line set, with their values, before
	// baseOnAxes sets the swept ones: an axis refuses a flag that sets
	// its magnitude, which every run would replace
	Given map[string]string
}

func newSweepCmd(stdout, stderr io.Writer, newTriggers func() *triggers.Registry) *cobra.Command {
	opts := sweepOptions{stampedeOptions: newStampedeOptions(stderr, newTriggers), Settings: sweep.DefaultSettings}
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Find each arm's tipping point: the smallest herd the service does not recover from",
		Long: `Sweep a magnitude of the trigger (or the rate, or the hot keys) and find,
for each arm on its own, its tipping point: the smallest magnitude after
which the service does not recover (docs/sweep.md).

--vary NAME=FROM..TO bisects on a log scale: FROM must survive and TO tip,
then the geometric mean of the bracket is probed until its ends are within
--resolution of each other. A probe is up to --repeat runs of one arm, each
a whole stampede of that arm alone (the same starting state as any arm); it
tips when at least half its runs end with a verdict other than recovered (a
tie tips). --grid NAME=V1,V2,... [NAME2=...] runs every cell instead and
maps the verdicts.

Every flag of the stampede applies to every run. Gates (--gate) are on
tipping points: 'none:tipping >= 2s', 'lock:tipping == none'; a failed gate
exits 99. Results (herdbench.sweep/v2) are written under --results-dir, also
when interrupted or capped (marked partial).

Magnitudes: rate, hot_keys, and the duration and count options of the
trigger: ` + magnitudeHelp(opts.Plan.Triggers),
		Example: `  herdbench sweep --trigger slowdb --retry immediate:4 --vary slowdb_for=500ms..10s --after 12s
  herdbench sweep --trigger burst --vary burst=10..2000 --resolution 0.05 --repeat 1
  herdbench sweep --trigger expire --grid rate=300,1000,3000 --grid hot_keys=10,100,1000 \
    -o html=map.html
  herdbench sweep --trigger burst --vary burst=10..2000 --gate 'none:tipping >= 200' --dry-run`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Given = given(c.Flags())
			baseOnAxes(c.Flags(), opts.Plan, opts.Vary, opts.Grid)
			opts.TestbedSet = changed(c.Flags(), startFlags)
			opts.ArmsSet = c.Flags().Changed("arms")
			opts.TriggerSet = triggerFlagsSet(c.Flags(), opts.Plan)
			opts.PlanSet = planFlagsSet(c.Flags())
			return sweepRun(c.Context(), stdout, stderr, opts)
		},
	}
	bindStampedeFlags(c.Flags(), &opts.stampedeOptions)
	fs := c.Flags()
	fs.Lookup("gate").Usage = "a pass/fail rule on a tipping point, [ARM:]tipping OP VALUE such as 'none:tipping >= 2s' or 'lock:tipping == none' (repeatable); a failed gate exits 99"
	fs.Var((*onceString)(&opts.Vary), "vary", "bisect `NAME=FROM..TO` for each arm's tipping point: 500ms..10s for a duration, 10..1000 for a count")
	fs.StringArrayVar(&opts.Grid, "grid", nil, "run every cell instead: `NAME=V1,V2,...` (one or two axes, each its own flag or argument)")
	fs.Float64Var(&opts.Settings.Resolution, "resolution", opts.Settings.Resolution, "bisect until the bracket's ends are within this ratio of each other (above 0, below 1)")
	// the stampede's --repeat (each arm N times) is, in a sweep, the runs
	// of each probe: each run is then one run of one arm
	own := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	own.IntVar(&opts.Settings.Repeat, "repeat", opts.Settings.Repeat, "runs per probe, at most: a probe tips when at least half its runs do not recover, and stops once that is decided")
	*fs.Lookup("repeat") = *own.Lookup("repeat")
	fs.IntVar(&opts.Settings.MaxRuns, "max-runs", opts.Settings.MaxRuns, "stop after this many runs in all, with the brackets so far (marked partial)")
	fs.DurationVar((*time.Duration)(&opts.Settings.MaxTime), "max-time", time.Duration(opts.Settings.MaxTime), "start no run after this long, and stop with the brackets so far (marked partial)")
	regroup(fs, groupSweep, "vary", "grid", "resolution", "repeat", "max-runs", "max-time")
	groupHelp(c)
	return c
}

// magnitudeHelp lists every trigger's magnitudes.
func magnitudeHelp(reg *triggers.Registry) string {
	var b strings.Builder
	for _, n := range reg.Names() {
		names := sweep.MagnitudeNames(plan.Plan{Trigger: n, Triggers: reg})
		b.WriteString(wrapItem(n, strings.Join(names, ", ")))
	}
	return b.String()
}

func sweepRun(ctx context.Context, stdout, stderr io.Writer, opts sweepOptions) error {
	gateExprs := opts.Gates
	opts.Gates = nil // the sweep's, on tipping points: not the runs'
	var sw sweep.Sweep
	var gates []sweep.Gate
	p, outs, err := prepare(ctx, &opts.stampedeOptions, func(plan plan.Plan) (err error) {
		sw, gates, err = buildSweep(opts, plan, gateExprs)
		return err
	})
	if err != nil {
		return atAxis(err, opts)
	}
	if opts.DryRun {
		tg, sub := opts.target()
		seePlan(ctx, heaviest(sw), tg, sub)
		return reporters.SweepDryRun(stdout, sw.Preview(), plan.Describe(heaviest(sw), tg, sub))
	}
	return opts.open(ctx, stderr, p, func(o plan.Opened) error {
		return sweepAndReport(ctx, stdout, stderr, opts, o, sw, gates, outs)
	})
}

// heaviest is the sweep's plan at its highest magnitudes, every arm:
// what a dry run shows of one run.
func heaviest(sw sweep.Sweep) plan.Plan {
	var at []sweep.Setting
	if ax := sw.Vary; ax != nil {
		at = []sweep.Setting{{Name: ax.Name, Value: ax.To, Unit: ax.Unit, Text: sweep.Format(ax.To, ax.Unit)}}
	} else if cells := sweep.Cells(sw.Grid); len(cells) > 0 {
		at = cells[len(cells)-1]
	}
	p, err := sweep.PlanAt(sw.Plan, sw.Plan.Arms[0], at)
	if err != nil {
		return sw.Plan // checked by buildSweep: not reached
	}
	p.Arms = sw.Plan.Arms
	return p
}

// buildSweep reads the sweep's flags for plan: every problem at once,
// each naming its flag and the accepted values. Each end of the range
// (each value of a grid) is checked as a plan on the target, so a
// magnitude over the target's caps is refused before anything runs.
func buildSweep(opts sweepOptions, plan plan.Plan, gateExprs []string) (sweep.Sweep, []sweep.Gate, error) {
	sw := sweep.Sweep{Plan: plan, Settings: opts.Settings}
	bad := opts.Settings.Validate()
	if slices.ContainsFunc(opts.Outputs, func(o string) bool { return strings.HasPrefix(o, vegetaFormat) }) {
		bad.Add("output", "vegeta: a run's every request, and a sweep's results are its tipping points (accepted: %s)", strings.Join(reporters.SweepFormatNames(), ", "))
	}
	var extremes [][]sweep.Setting
	switch {
	case opts.Vary != "" && len(opts.Grid) > 0:
		bad.Add("vary", "given with --grid (accepted: one of them: --vary bisects, --grid maps every cell)")
	case opts.Vary == "" && len(opts.Grid) == 0:
		bad.Add("vary", "required, or --grid (accepted: --vary NAME=FROM..TO or --grid NAME=V1,V2,...; NAME one of %s)", strings.Join(sweep.MagnitudeNames(plan), ", "))
	case opts.Vary != "":
		ax, err := sweep.ParseAxis(plan, opts.Vary)
		if err != nil {
			bad = append(bad, err)
			break
		}
		sw.Vary = &ax
		bad = append(bad, opts.replaced("vary", opts.Vary, ax.Name)...)
		extremes = [][]sweep.Setting{{{Name: ax.Name, Value: ax.From, Unit: ax.Unit, Text: sweep.Format(ax.From, ax.Unit)}},
			{{Name: ax.Name, Value: ax.To, Unit: ax.Unit, Text: sweep.Format(ax.To, ax.Unit)}}}
	case len(opts.Grid) > 2:
		bad.Add("grid", "%d axes (accepted: one or two)", len(opts.Grid))
	default:
		if v, ok := opts.Given["resolution"]; ok {
			bad.Add("resolution", "%s: bisects a --vary, and --grid runs every cell it lists, so it would do nothing (accepted: with --vary, or left out)", v)
		}
		for _, spec := range opts.Grid {
			g, err := sweep.ParseGrid(plan, spec)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			sw.Grid = append(sw.Grid, g)
			bad = append(bad, opts.replaced("grid", spec, g.Name)...)
		}
		if len(sw.Grid) == 2 && sw.Grid[0].Name == sw.Grid[1].Name {
			bad.Add("grid", "%s twice (accepted: two different axes)", sw.Grid[0].Name)
		}
		if len(bad) == 0 {
			extremes = sweep.Cells(sw.Grid)
		}
	}
	arms := make([]string, len(plan.Arms))
	for i, a := range plan.Arms {
		arms[i] = a.Name
	}
	var gs []sweep.Gate
	if sw.Vary != nil || len(bad) == 0 { // else --vary's own problem says enough
		var errs herd.FieldErrors
		gs, errs = sweep.ParseGates(gateExprs, sw.Vary, arms)
		bad = append(bad, errs...)
	}
	tg, sub := opts.target()
	bad = append(bad, checkExtremes(plan, extremes, tg, sub, opts.Vary != "")...)
	if len(bad) > 0 {
		return sw, nil, cli.UsageError{Err: bad}
	}
	return sw, gs, nil
}

// replaced is the problem of a flag given beside the axis spec (of
// field) that sweeps its magnitude name: every run would set the axis's
// value in its place.
func (opts sweepOptions) replaced(field, spec, name string) herd.FieldErrors {
	flag := strings.ReplaceAll(name, "_", "-")
	v, ok := opts.Given[flag]
	if !ok {
		return nil
	}
	return herd.FieldErrors{{Field: field, Elem: spec, Msg: fmt.Sprintf(
		"sweeps %s, and --%s %s sets it too: every run would replace it with the axis's value (accepted: one of them: the axis, or --%s on stampede)",
		name, flag, v, flag)}}
}

// given is every flag of fs the command line set, with its value.
func given(fs *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.Visit(func(f *pflag.Flag) { out[f.Name] = f.Value.String() })
	return out
}

// checkExtremes checks the plan at each setting on tg, its problems
// named by the --vary or --grid that asks for it.
func checkExtremes(plan plan.Plan, extremes [][]sweep.Setting, tg *targets.Target, sub plan.Subject, vary bool) herd.FieldErrors {
	field := "grid"
	if vary {
		field = "vary"
	}
	var bad herd.FieldErrors
	for _, at := range extremes {
		p, err := sweep.PlanAt(plan, plan.Arms[0], at)
		if err == nil {
			p.Arms = plan.Arms
			if tg != nil {
				err = p.ValidateFor(tg, sub)
			} else {
				err = append(herd.Fields(p.Validate()), p.CheckArms(subject.Checker{})...).Err()
			}
		}
		for _, e := range herd.Fields(err) {
			bad = append(bad, &herd.FieldError{Field: field, Elem: sweep.AtText(at), Msg: e.Error(), Err: e})
		}
		if len(bad) > 0 {
			return bad // one end's problems say enough
		}
	}
	return nil
}

// sweepAndReport sweeps on an open target and writes the results and the
// reports: gates failed (99), interrupted or failed (1, with the results
// so far). o says where the live metrics are served by default.
func sweepAndReport(ctx context.Context, stdout, stderr io.Writer, opts sweepOptions, o plan.Opened, sw sweep.Sweep, gates []sweep.Gate, outs []output) error {
	target, sub := o.Target, o.Subject
	gen, err := workersFor(ctx, opts.stampedeOptions, target, "")
	if err != nil {
		return err
	}
	observer, stopMetrics, err := liveMetrics(stderr, opts.MetricsAddr, o)
	if err != nil {
		return err
	}
	defer stopMetrics()
	line := newSweepLine(stderr, opts.Progress)
	sw.Progress = line.sweep
	started := time.Now()
	dir := filepath.Join(opts.ResultsDir, started.Format("20060102-150405"))
	sw.Run = func(ctx context.Context, p plan.Plan, _ []sweep.Setting) (*result.ArmResult, error) {
		rep, err := experiment.Run(ctx, p, experiment.Env{Target: target, Subject: sub, Version: herdbenchVersion(), Progress: line.run, Observer: observer, Generator: gen,
			ResultsDir: absDir(dir)})
		if err != nil {
			return nil, err
		}
		if len(rep.Arms) != 1 {
			return nil, fmt.Errorf("a run of one arm gave %d results", len(rep.Arms))
		}
		return &rep.Arms[0], nil
	}
	res, runErr := sw.Do(ctx)
	line.close()
	res.Version = herdbenchVersion()
	res.Environment = experiment.EnvironmentOf(target)
	res.Gates = sweep.CheckGates(gates, res.Arms)
	predict.Sweep(res, poolsOf(ctx, sub))
	saved := filepath.Join(dir, "sweep.json")
	if err := reporters.WriteSweepJSONFile(saved, res); err != nil {
		return err
	}
	if err := renderEach(stdout, outs, func(w io.Writer, format string) error { return reporters.RenderSweep(w, format, res) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "results   %s\n", strings.Join(append([]string{saved}, outputFiles(outs, false)...), ", "))
	switch {
	case runErr != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted: partial results (%d of %d arms begun) in %s", len(res.Arms), len(sw.Plan.Arms), saved)
	case runErr != nil:
		return fmt.Errorf("%w (partial results in %s)", runErr, saved)
	case sweep.Failed(res.Gates) > 0:
		var why []string
		for _, g := range res.Gates {
			if !g.Passed {
				why = append(why, fmt.Sprintf("gate %q failed on %s: tipping %s", g.Gate, g.Arm, g.Measured))
			}
		}
		return gatesFailed{why}
	}
	return nil
}

// baseOnAxes sets each swept magnitude the command line left alone to the
// first value of its range: every run of the sweep sets it, so the plan
// checked before the sweep is then one of its runs', not a default from
// outside the range (a burst of 1,000 against a target's cap of 300, when
// the sweep asks for 10 to 300). A value that does not read is left for
// the sweep's own check to name, and so is an option of a trigger the
// plan does not run.
func baseOnAxes(fs *pflag.FlagSet, plan plan.Plan, vary string, grid []string) {
	other := map[string]bool{} // the options of the triggers the plan does not run
	for _, o := range plan.Triggers.Options() {
		if o.Trigger != plan.Trigger {
			other[o.Flag()] = true
		}
	}
	specs := grid
	if vary != "" {
		specs = []string{vary}
	}
	for _, spec := range specs {
		name, first, ok := axisStart(plan, spec, vary != "")
		if !ok {
			continue
		}
		if f := fs.Lookup(strings.ReplaceAll(name, "_", "-")); f != nil && !f.Changed && !other[f.Name] {
			_ = fs.Set(f.Name, first)
		}
	}
}

// axisStart is the magnitude an axis spec sweeps and its first value, as
// its flag reads it; !ok when the spec does not read as the sweep reads
// it (burst=-5..100), which the sweep's own check names: the flag, which
// would take -5, would be blamed for it.
func axisStart(plan plan.Plan, spec string, vary bool) (name, first string, ok bool) {
	if vary {
		ax, err := sweep.ParseAxis(plan, spec)
		return ax.Name, sweep.Format(ax.From, ax.Unit), err == nil
	}
	g, err := sweep.ParseGrid(plan, spec)
	if err != nil || len(g.Values) == 0 {
		return "", "", false
	}
	return g.Name, sweep.Format(g.Values[0], g.Unit), true
}

// poolsOf are the testbed's pools, which the model's predictions read;
// nil on a service, whose pools herdbench does not know (its predictions
// say so).
func poolsOf(ctx context.Context, sub plan.Subject) *predict.Pools {
	tb, ok := sub.(*subject.Testbed)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return tb.Pools(ctx)
}
