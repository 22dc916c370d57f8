package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/edge"
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
file. The file is decoded strictly: unknown keys, values of the wrong type
and values out of range are reported all at once, each with its file:line,
and exit 2. The format's JSON Schema is docs/scenario.schema.json; examples
are in examples/.`,
		Example: `  herdbench run examples/stampede.yaml
  herdbench run examples/outage-retries.yaml --seed 7 -o html=report.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := scenarioOptions(c.Context(), args[0], c.Flags(), stderr, newTriggers)
			if err != nil {
				return err
			}
			return stampedeRun(c.Context(), stdout, stderr, o)
		},
	}
	bindStampedeFlags(c.Flags(), &opts)
	return c
}

// scenarioOptions is the one place that orders a run's settings: the
// stampede's defaults, then the scenario file, then the flags given on the
// command line. Every problem of the file is reported at once, with the
// problems of the plan it makes, in file order.
func scenarioOptions(ctx context.Context, path string, cmdline *pflag.FlagSet, stderr io.Writer, newTriggers func() *triggers.Registry) (stampedeOptions, error) {
	opts := newStampedeOptions(stderr, newTriggers)
	f, err := scenario.Read(path, opts.Plan.Triggers)
	if f == nil {
		return stampedeOptions{}, usageError{err}
	}
	bad := herd.Fields(err)
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
		delete(fromFile, fl.Name)
		target := fs.Lookup(fl.Name)
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			_ = target.Value.(pflag.SliceValue).Replace(sv.GetSlice())
		} else {
			_ = target.Value.Set(fl.Value.String())
		}
		if fl.Name == "arms" {
			opts.Scenario = nil // --arms replaces the file's arms
		}
	})
	opts.ReplicasSet = cmdline.Changed("replicas") || fromFile["replicas"].Flag != ""
	opts.ArmsSet = cmdline.Changed("arms")
	// check the plan against its target: a service's arms are its target
	// file's, and an edge arm needs a testbed of two tiers
	svc, err := describeTarget(opts.Target)
	switch {
	case err != nil:
		bad = append(bad, inFile(unwrapUsage(err), path, f, fromFile)...)
	case svc != nil:
		opts.service = svc
	default:
		opts.testbed = testbedToUse(ctx, opts)
	}
	if _, _, err := buildPlan(opts); err != nil {
		bad = append(bad, inFile(unwrapUsage(err), path, f, fromFile)...)
	}
	if len(bad) > 0 {
		return opts, usageError{bad.ByLine()}
	}
	return opts, nil
}

// unwrapUsage is the problems a usage error carries, before they were put
// in flag terms.
func unwrapUsage(err error) error {
	var u usageError
	if errors.As(err, &u) {
		return u.err
	}
	return err
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
	accepted := map[string]string{
		"duration": "a duration such as 500ms, 2s or 1m30s", "int": "a whole number", "uint64": "a whole number, 0 or more",
		"uint32": "a whole number, 0 or more", "float64": "a number", "bool": "true or false",
	}[fl.Value.Type()]
	if accepted == "" {
		return err
	}
	return fmt.Errorf("%q is not %s (accepted: %s)", v, accepted, accepted)
}

// scenarioArms builds the arms of a scenario file on the base knobs: each
// arm's strategy (or its name read as --arms reads it), then its own knobs
// and client policies.
func scenarioArms(path string, f *scenario.File, base api.Config) ([]experiment.Arm, herd.FieldErrors) {
	var arms []experiment.Arm
	var errs herd.FieldErrors
	for i, fa := range f.Arms {
		a := experiment.Arms([]string{fa.Name}, base)[0]
		if fa.Strategy != nil {
			a = experiment.Arm{Name: fa.Name, Config: base}
			a.Config.Strategy = *fa.Strategy
		}
		before := len(errs)
		for _, s := range fa.Settings(f, i) {
			if err := setArm(&a, s.Flag, s.Values[0]); err != nil {
				errs = append(errs, &herd.FieldError{File: path, Line: s.Line, Field: s.Path, Msg: err.Error(), Err: err})
			}
		}
		if problems := a.Config.Problems(); len(problems) > 0 && fa.Strategy != nil && len(errs) == before {
			// a named arm's config is checked here, with its place; arms
			// read as --arms are checked by the plan
			for _, e := range problems {
				errs = append(errs, &herd.FieldError{File: path, Line: fa.Line, Field: fmt.Sprintf("arms[%d]", i), Msg: e.Error(), Err: e})
			}
			a.Config = base // reported once
			a.Config.Strategy = api.None
		}
		arms = append(arms, a)
	}
	return arms, errs
}

// setArm sets one of an arm's own settings, a client policy or a knob,
// from a scenario file's value.
func setArm(a *experiment.Arm, flag, v string) error {
	var err error
	switch flag {
	case "retry":
		var p retry.Policy
		if p, err = retry.Parse(v); err == nil {
			a.Retry = &p
		}
	case "throttle":
		var k float64
		if k, err = retry.ParseThrottle(v); err == nil {
			a.Throttle = &k
		}
	case "hedge":
		var h retry.Hedge
		if h, err = retry.ParseHedge(v); err == nil {
			a.Hedge = &h
		}
	case "client-breaker":
		var b retry.Breaker
		if b, err = retry.ParseBreaker(v); err == nil {
			a.Breaker = &b
		}
	case "edge-timeout", "edge-retry", "edge-retry-budget", "edge-breaker", "edge-bulkhead", "edge-deadline":
		if a.Edge == nil {
			a.Edge = &edge.Patch{}
		}
		err = a.Edge.Set(strings.ReplaceAll(strings.TrimPrefix(flag, "edge-"), "-", "_"), v)
	default:
		knobs := pflag.NewFlagSet("arm", pflag.ContinueOnError)
		addKnobFlags(knobs, &a.Config)
		err = setFlag(knobs.Lookup(flag), v)
	}
	return err
}
