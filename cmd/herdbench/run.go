package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

func newRunCmd(stdout, stderr io.Writer, newTriggers func() *triggers.Registry) *cobra.Command {
	opts := newStampedeOptions(stderr, newTriggers)
	c := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run the experiment a scenario file describes",
		Long: `Run the stampede a scenario file describes: target, load, trigger and its
options, the replicas' knobs, the arms (each with its own knobs and client
policies if it likes), the timeline, gates, stop conditions and outputs.

Every key of the file is the flag of the same name under another spelling
(load.hot_keys is --hot-keys); flags given on the command line override the
file. --arms picks the file's arms by name, in its own order (a name the
file does not have is read as a strategy or a client arm); a value the file
gives is checked all the same, since the file is valid on its own. The file is
decoded strictly: unknown keys, values of the wrong type
and values out of range are reported all at once, each with its file:line,
and exit 2. The format's JSON Schema is docs/scenario.schema.json; examples
are in examples/.`,
		Example: `  herdbench run examples/stampede.yaml
  herdbench run examples/outage-retries.yaml --seed 7 -o html=report.html`,
		Args: oneArg("run", "a scenario file", "such as examples/stampede.yaml"),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := scenarioOptions(c.Context(), args[0], c.Flags(), stderr, newTriggers)
			if err != nil {
				return err
			}
			return stampedeRun(c.Context(), stdout, stderr, o)
		},
	}
	bindStampedeFlags(c.Flags(), &opts)
	groupHelp(c)
	return c
}

// scenarioOptions is the one place that orders a run's settings: the
// stampede's defaults, then the scenario file, then the flags given on the
// command line. Every problem of the file is reported at once, with the
// problems of the plan it makes, in file order. A value of the file that
// a flag replaces is still checked as the file gives it: a file is valid
// on its own (docs/bad-input.md).
func scenarioOptions(ctx context.Context, path string, cmdline *pflag.FlagSet, stderr io.Writer, newTriggers func() *triggers.Registry) (stampedeOptions, error) {
	opts, bad, replaced, err := readScenario(ctx, path, cmdline, stderr, newTriggers)
	if err != nil {
		return stampedeOptions{}, err
	}
	if len(replaced) > 0 {
		_, alone, _, _ := readScenario(ctx, path, dryRunFlags(), stderr, newTriggers)
		for _, e := range alone {
			if atSetting(e, path, replaced) && !slices.ContainsFunc(bad, func(b *herd.FieldError) bool { return b.Error() == e.Error() }) {
				bad = append(bad, e)
			}
		}
	}
	if len(bad) > 0 {
		return opts, cli.UsageError{Err: bad.ByLine()}
	}
	return opts, nil
}

// readScenario is the stampede's options from the scenario file at path
// and then cmdline, their problems, and the file's settings cmdline
// replaced; err is a file that could not be read at all.
func readScenario(ctx context.Context, path string, cmdline *pflag.FlagSet, stderr io.Writer, newTriggers func() *triggers.Registry) (
	opts stampedeOptions, bad herd.FieldErrors, replaced []scenario.Setting, err error) {
	opts = newStampedeOptions(stderr, newTriggers)
	f, err := scenario.Read(path, scenario.Vocabulary{Triggers: opts.Plan.Triggers, Knobs: subject.Knobs(nil)})
	if f == nil {
		return stampedeOptions{}, nil, nil, cli.UsageError{Err: err}
	}
	bad = herd.Fields(err)
	fs := pflag.NewFlagSet("scenario", pflag.ContinueOnError)
	bindStampedeFlags(fs, &opts)
	fromFile := map[string]scenario.Setting{}
	for _, s := range f.Settings() {
		fl := fs.Lookup(s.Flag)
		for j, v := range s.Values {
			if err := setFlag(fl, v); err != nil {
				line, field := s.Line, s.Path
				if j < len(s.Lines) {
					line, field = s.Lines[j], fmt.Sprintf("%s[%d]", s.Path, j)
				}
				bad = append(bad, &herd.FieldError{File: path, Line: line, Field: field, Msg: err.Error(), Err: err})
			}
		}
		fromFile[s.Flag] = s
	}
	opts.Scenario, opts.ScenarioPath = f, path
	// the command line last: a flag given there replaces the file's value
	cmdline.Visit(func(fl *pflag.Flag) {
		if s, ok := fromFile[fl.Name]; ok {
			replaced = append(replaced, s)
		}
		delete(fromFile, fl.Name)
		target := fs.Lookup(fl.Name)
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			_ = target.Value.(pflag.SliceValue).Replace(sv.GetSlice())
		} else {
			_ = target.Value.Set(fl.Value.String())
		}
	})
	opts.TestbedSet = changed(cmdline, startFlags)
	for _, f := range startFlags {
		if _, ok := fromFile[f]; ok && !slices.Contains(opts.TestbedSet, f) {
			opts.TestbedSet = append(opts.TestbedSet, f)
		}
	}
	opts.ArmsSet = cmdline.Changed("arms")
	opts.TriggerSet = triggerFlagsSet(cmdline, opts.Plan)
	opts.PlanSet = planFlagsSet(cmdline)
	for _, f := range append(service.PlanFlags, service.KeyFlags...) {
		if _, ok := fromFile[f]; ok {
			opts.PlanSet[f] = true // the scenario file's
		}
	}
	for _, o := range append(opts.Plan.Triggers.Options(), triggers.Option{Key: "trigger"}) {
		if _, ok := fromFile[o.Flag()]; ok {
			opts.TriggerSet[o.Flag()] = true // the scenario file's
		}
	}
	// check the plan against its target: a service's arms are its target
	// file's, and an edge arm needs a testbed of two tiers
	// a testbed that cannot be had is the run's to report, with its own
	// exit code; problems with its options are the user's, told at their
	// lines in the file too
	var bed herd.FieldErrors
	if opts.bedErr, err = opts.resolveTarget(ctx); err != nil {
		bad = append(bad, inFile(cli.UnwrapUsage(err), path, f, fromFile, opts.Plan.Triggers)...)
	} else {
		bed = inFile(testbedProblems(opts.bedErr, opts), path, f, fromFile, opts.Plan.Triggers)
	}
	if _, _, err := buildPlan(opts); err != nil {
		bad = append(bad, inFile(cli.UnwrapUsage(err), path, f, fromFile, opts.Plan.Triggers)...)
	}
	return opts, withTestbed(bad.FirstPerField(), bed), replaced, nil // one problem per value
}

// dryRunFlags is a command line of --dry-run alone: a scenario file read
// on its own, sending nothing and needing no secret yet.
func dryRunFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("dry run", pflag.ContinueOnError)
	fs.Bool("dry-run", false, "")
	_ = fs.Set("dry-run", "true")
	return fs
}

// atSetting says whether e is a problem of path at one of settings.
func atSetting(e *herd.FieldError, path string, settings []scenario.Setting) bool {
	return e.File == path && slices.ContainsFunc(settings, func(s scenario.Setting) bool {
		return e.Field == s.Path || strings.HasPrefix(e.Field, s.Path+"[")
	})
}

// setFlag sets a flag from a file's value. A value that does not parse
// leaves the flag as it was (pflag would zero it) and the error says what
// the flag accepts.
func setFlag(fl *pflag.Flag, v string) error {
	old := fl.Value.String()
	err := fl.Value.Set(v)
	if err == nil {
		return nil
	}
	if _, slice := fl.Value.(pflag.SliceValue); !slice {
		_ = fl.Value.Set(old)
	}
	accepted := acceptedForms[fl.Value.Type()]
	if accepted == "" {
		return err
	}
	if outOfRange(v, fl.Value.Type()) { // a whole number all the same: the flag tells its bounds
		return fmt.Errorf("%s out of range (accepted: %s: %s)", v, accepted, strings.ReplaceAll(fl.Usage, "`", ""))
	}
	return fmt.Errorf("%q is not %s (accepted: %s)", v, accepted, accepted)
}

// setKnob sets one of an arm's own knobs from a scenario file's value, by
// the knob's flag.
func setKnob(a *arm.Arm, flag, v string) error {
	var c replica.Config
	knobs := pflag.NewFlagSet("arm", pflag.ContinueOnError)
	testbedcmd.AddKnobFlags(knobs, &c, nil)
	fl := knobs.Lookup(flag)
	if fl == nil {
		return fmt.Errorf("unknown key %q", flag) // a scenario key names a flag: a test checks it
	}
	if err := setFlag(fl, v); err != nil {
		return err
	}
	name := strings.ReplaceAll(flag, "-", "_")
	// its range first: a value out of it (NaN) may not even marshal
	if i := slices.IndexFunc(c.Problems(), func(e *herd.FieldError) bool { return e.Field == name }); i >= 0 {
		return errors.New(c.Problems()[i].Msg)
	}
	a.Knobs = a.Knobs.Merge(replica.PatchOf(c, name))
	return nil
}
