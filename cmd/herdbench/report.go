package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/baseline"
	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/reporters"
)

type reportOptions struct {
	Files    []string
	Baseline string
	Outputs  []string
	Gates    []string
	Limits   []string // --max-regression
}

func newReportCmd(stdout io.Writer) *cobra.Command {
	var opts reportOptions
	c := &cobra.Command{
		Use:   "report RESULTS.json... | report --baseline OLD.json NEW.json",
		Short: "Render saved results again, check gates on them, or compare a run with a baseline",
		Long: `Render results files that herdbench stampede or run wrote, in any report
format (-o, as the stampede takes it; html shows several runs in one file),
and check gates on them again (--gate): a failed gate exits 99.

With --baseline, compare one run with a baseline run of the same
experiment, arm by arm (arms match by name): each figure in both and its
change, and --max-regression limits on how much a figure may get worse,
such as db.queries=10% (at most 10% more than the baseline) or
http.p99_ms=50 (at most 50 ms more). A limit exceeded exits 99.`,
		Example: `  herdbench report herdbench-results/20261122-061143/results.json -o html=report.html
  herdbench report before.json after.json -o html=compare.html
  herdbench report results.json --gate 'lock:db.queries <= 120' -o junit=gates.xml
  herdbench report --baseline main.json pr.json --max-regression db.queries=10% \
    -o markdown=comment.md`,
		Args: someArgs("report", "a results file", "such as herdbench-results/20261128-101500/results.json"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Files = args
			return reportRun(stdout, opts)
		},
	}
	fs := c.Flags()
	fs.StringVar(&opts.Baseline, "baseline", "", "compare the one results file given with this baseline `FILE`")
	fs.StringArrayVarP(&opts.Outputs, "output", "o", nil, "a report: FORMAT to stdout or FORMAT=FILE, FORMAT one of "+strings.Join(reporters.FormatNames(), ", ")+
		" (with --baseline: table, markdown, json); repeatable; default: table")
	fs.StringArrayVar(&opts.Gates, "gate", nil, "check this gate on every results file instead of the ones it was run with: [ARM:]PATH OP VALUE, or [ARM:]PATH OP VALUE for SHARE of seconds (repeatable)")
	fs.StringArrayVar(&opts.Limits, "max-regression", nil, "with --baseline: PATH=MAX, at most MAX% more than the baseline (db.queries=10%) or MAX more (http.p99_ms=50); repeatable")
	return c
}

// comparisonFormats are the formats a comparison renders in.
var comparisonFormats = map[string]func(io.Writer, baseline.Comparison) error{
	"table":    reporters.Comparison,
	"markdown": reporters.ComparisonMarkdown,
	"json":     reporters.ComparisonJSON,
}

func reportRun(stdout io.Writer, opts reportOptions) error {
	if opts.Baseline != "" {
		return compareRun(stdout, opts)
	}
	if len(opts.Limits) > 0 {
		return cli.UsageErrorf("--max-regression: needs --baseline (accepted: report --baseline OLD.json NEW.json --max-regression PATH=MAX)")
	}
	outs, err := parseOutputs(opts.Outputs, "", reporters.FormatNames())
	if err == nil {
		err = outputPathProblems(outs).Err()
	}
	if err != nil {
		return cli.UsageError{Err: err}
	}
	gs, problems := gates.ParseAll(opts.Gates, "gate")
	var bad []error
	if len(problems) > 0 {
		bad = append(bad, problems)
	}
	var reps []*experiment.Report
	for _, path := range opts.Files {
		rep, err := reporters.ReadJSONFile(path)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		if len(opts.Gates) > 0 {
			names := make([]string, len(rep.Arms))
			for i, a := range rep.Arms {
				names[i] = a.Name
			}
			paths, words := rep.GatePaths()
			errs := gates.Validate(gs, names, paths, words, rep.SecondPaths(), "gate")
			if len(errs) == 0 {
				errs = unmeasured(gs, rep, words)
			}
			if len(errs) > 0 {
				bad = append(bad, fmt.Errorf("--gate on %s: %w", path, errs))
				continue
			}
			rep.Plan.Gates, rep.Gates = gs, result.CheckGates(gs, rep.Arms)
		}
		reps = append(reps, rep)
	}
	if len(bad) > 0 {
		return cli.UsageError{Err: errors.Join(bad...)}
	}
	if len(reps) == 1 || len(outs) == 0 {
		outs = withTable(outs)
	}
	if len(reps) > 1 {
		for _, o := range outs {
			if o.format != "html" {
				return cli.UsageErrorf("-o %s: shows one run, and %d results files were given (accepted: html for several runs, or one file)", o.format, len(reps))
			}
		}
	}
	if err := writeOutputs(stdout, outs, reps); err != nil {
		return err
	}
	var why []string
	for _, rep := range reps {
		why = append(why, rep.Failures()...)
	}
	if len(why) > 0 {
		return gatesFailed{why}
	}
	return nil
}

// compareRun compares the one results file given with --baseline.
func compareRun(stdout io.Writer, opts reportOptions) error {
	var bad []error
	if len(opts.Files) != 1 {
		bad = append(bad, fmt.Errorf("--baseline: compares one run, got %d results files (accepted: report --baseline OLD.json NEW.json)", len(opts.Files)))
	}
	if len(opts.Gates) > 0 {
		bad = append(bad, errors.New("--gate: not with --baseline (accepted: --max-regression PATH=MAX)"))
	}
	var limits []baseline.Limit
	for _, s := range opts.Limits {
		l, err := baseline.ParseLimit(s)
		if err != nil {
			bad = append(bad, fmt.Errorf("--max-regression: %w", err))
			continue
		}
		limits = append(limits, l)
	}
	if err := baseline.Validate(limits, result.GatePaths()); err != nil {
		bad = append(bad, fmt.Errorf("--max-regression: %w", err))
	}
	outs, err := parseOutputs(opts.Outputs, "", slices.Sorted(maps.Keys(comparisonFormats)))
	if err == nil {
		err = outputPathProblems(outs).Err()
	}
	if err != nil {
		bad = append(bad, err)
	}
	if len(outs) == 0 {
		outs = []output{{format: "table"}}
	}
	var base, run *experiment.Report
	if len(bad) == 0 {
		if base, err = reporters.ReadJSONFile(opts.Baseline); err != nil {
			bad = append(bad, err)
		}
		if run, err = reporters.ReadJSONFile(opts.Files[0]); err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) == 0 {
		bad = unheld(limits, base, run)
	}
	if len(bad) > 0 {
		return cli.UsageError{Err: errors.Join(bad...)}
	}
	c := baseline.Compare(figures(base), figures(run), limits)
	c.Baseline, c.Run, c.Partial = opts.Baseline, opts.Files[0], run.Partial
	for _, o := range outs {
		if o.path == "" {
			if err := comparisonFormats[o.format](stdout, c); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(o.path, func(w io.Writer) error { return comparisonFormats[o.format](w, c) }); err != nil {
			return fmt.Errorf("-o %s=%s: %w", o.format, o.path, err)
		}
	}
	if !c.Passed() {
		return gatesFailed{c.Failures()}
	}
	return nil
}

// figures are a report's arms as gates read them.
func figures(rep *experiment.Report) []gates.Arm {
	arms := make([]gates.Arm, 0, len(rep.Arms))
	for _, a := range rep.Arms {
		arms = append(arms, gates.Arm{Name: a.Name, Figures: a.Figures()})
	}
	return arms
}

// writeFile creates path and its directory and writes it with render.
func writeFile(path string, render func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = render(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unmeasured refuses gates on a figure no arm of rep has (a two-tier
// figure in a one-tier run's results, a burst's on another trigger), and
// gates over seconds where no arm has a whole second after its settle:
// the run did not measure it, and the gate could only fail, exit 99. The
// target's own series are read apart, and pass.
func unmeasured(gs []gates.Gate, rep *experiment.Report, words map[string][]string) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, g := range gs {
		if _, word := words[g.Path]; word || strings.HasPrefix(g.Path, "prometheus.") {
			continue
		}
		if !slices.ContainsFunc(rep.Arms, func(a result.ArmResult) bool {
			return (g.Arm == "" || g.Arm == a.Name) && a.Figures()[g.Path] != nil
		}) {
			bad = append(bad, &herd.FieldError{Field: "gate", Elem: g.Expr,
				Msg: fmt.Sprintf("no arm of these results has %s: the run did not measure it, so the gate could only fail (accepted: a gate on a figure the results hold)", g.Path)})
			continue
		}
		if g.Share > 0 && !slices.ContainsFunc(rep.Arms, func(a result.ArmResult) bool {
			return (g.Arm == "" || g.Arm == a.Name) && len(result.SecondsOf(a, g.Path)) > 0
		}) {
			bad = append(bad, &herd.FieldError{Field: "gate", Elem: g.Expr,
				Msg: "no arm of these results has a whole second of its timeline after its settle (settle_ms from the trigger's end), so the gate could only fail (accepted: a gate on the arm's figure, without for SHARE of seconds)"})
		}
	}
	return bad
}

// unheld refuses limits on a figure no arm of either results has, as
// unmeasured refuses such a gate: neither run measured it, and the limit
// could only read "no value" on every arm.
func unheld(limits []baseline.Limit, reps ...*experiment.Report) []error {
	var bad []error
	for _, l := range limits {
		held := slices.ContainsFunc(reps, func(rep *experiment.Report) bool {
			return slices.ContainsFunc(rep.Arms, func(a result.ArmResult) bool { return a.Figures()[l.Path] != nil })
		})
		if !held {
			bad = append(bad, fmt.Errorf("--max-regression: %q: no arm of either results has %s: neither run measured it, so the limit could only read no value (accepted: a limit on a figure the results hold)", l.Expr, l.Path))
		}
	}
	return bad
}
