package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/api"
)

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	opts := newStampedeOptions(stderr)
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
			o, err := scenarioOptions(args[0], c.Flags(), stderr)
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
// problems of the plan it makes.
func scenarioOptions(path string, cmdline *pflag.FlagSet, stderr io.Writer) (stampedeOptions, error) {
	f, err := scenario.Read(path)
	if f == nil {
		return stampedeOptions{}, usageError{err}
	}
	var bad []error
	if err != nil {
		bad = append(bad, err)
	}
	opts := newStampedeOptions(stderr)
	fs := pflag.NewFlagSet("scenario", pflag.ContinueOnError)
	bindStampedeFlags(fs, &opts)
	fromFile := map[string]scenario.Setting{}
	for _, s := range f.Settings() {
		fl := fs.Lookup(s.Flag)
		for _, v := range s.Values {
			if err := setFlag(fl, v); err != nil {
				bad = append(bad, fmt.Errorf("%s: %s", s.WhereValue(path, v), err))
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
	// a service's arms are its target file's: check the plan against it
	if svc, err := describeTarget(opts.Target); err != nil {
		var u usageError
		if errors.As(err, &u) {
			err = u.err
		}
		bad = append(bad, inFile(err, path, f, fromFile))
	} else {
		opts.service = svc
	}
	if _, _, err := buildPlan(opts); err != nil {
		var u usageError
		if errors.As(err, &u) {
			err = u.err
		}
		bad = append(bad, inFile(err, path, f, fromFile))
	}
	if len(bad) > 0 {
		return opts, usageError{byLine(errors.Join(bad...), path)}
	}
	return opts, nil
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

// byLine orders problems by their place in the file; problems without one
// (flags given on the command line) come last.
func byLine(err error, path string) error {
	lines := strings.Split(err.Error(), "\n")
	at := func(l string) int {
		var n int
		if rest, ok := strings.CutPrefix(l, path+":"); ok {
			_, _ = fmt.Sscanf(rest, "%d:", &n)
			return n
		}
		return 1 << 30
	}
	slices.SortStableFunc(lines, func(a, b string) int { return at(a) - at(b) })
	return errors.New(strings.Join(lines, "\n"))
}

// inFile points each problem the plan has with a value the file set at
// that value: "--rate: ..." becomes "s.yaml:4: load.rate: ...".
func inFile(err error, path string, f *scenario.File, fromFile map[string]scenario.Setting) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		flag, rest, ok := strings.Cut(l, ": ")
		if !ok || !strings.HasPrefix(flag, "--") {
			continue
		}
		name := strings.TrimPrefix(flag, "--")
		if name == "gates" { // the plan's field; the flag is --gate
			name = "gate"
		}
		if s, ok := fromFile[name]; ok {
			where := s.Where(path)
			if len(s.Lines) > 0 { // a list: point at the element the problem quotes
				for _, v := range s.Values {
					if strings.Contains(rest, fmt.Sprintf("%q", v)) || strings.HasPrefix(rest, v+":") {
						where = s.WhereValue(path, v)
						break
					}
				}
			}
			lines[i] = where + ": " + rest
			continue
		}
		if arms := f.Arms; name == "arms" && len(arms) > 0 {
			arm, why, _ := strings.Cut(rest, ": ")
			for j, a := range arms {
				if a.Name == arm {
					lines[i] = fmt.Sprintf("%s:%d: arms[%d] (%s): %s", path, a.Line, j, arm, why)
					break
				}
			}
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// scenarioArms builds the arms of a scenario file on the base knobs: each
// arm's strategy (or its name read as --arms reads it), then its own knobs
// and client policies.
func scenarioArms(path string, f *scenario.File, base api.Config) ([]experiment.Arm, []error) {
	var arms []experiment.Arm
	var errs []error
	for i, fa := range f.Arms {
		a := experiment.Arms([]string{fa.Name}, base)[0]
		if fa.Strategy != nil {
			a = experiment.Arm{Name: fa.Name, Config: base}
			a.Config.Strategy = *fa.Strategy
		}
		knobs := pflag.NewFlagSet("arm", pflag.ContinueOnError)
		addKnobFlags(knobs, &a.Config)
		for _, s := range fa.Settings(f, i) {
			v := s.Values[0]
			var err error
			switch s.Flag {
			case "retry":
				var p retry.Policy
				if p, err = retry.Parse(v); err == nil {
					a.Retry = &p
				}
			case "throttle":
				var k float64
				if _, err = fmt.Sscan(v, &k); err == nil && (k <= 0 || k > 100) {
					err = fmt.Errorf("%g out of range (accepted: K above 0 and at most 100, such as 2)", k)
				}
				if err == nil {
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
			default:
				err = setFlag(knobs.Lookup(s.Flag), v)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", s.Where(path), err))
			}
		}
		if err := a.Config.Validate(); err != nil && fa.Strategy != nil && len(errs) == 0 {
			// a named arm's config is checked here, with its place; arms
			// read as --arms are checked by the plan
			for _, l := range strings.Split(err.Error(), "\n") {
				errs = append(errs, fmt.Errorf("%s:%d: arms[%d]: %s", path, fa.Line, i, l))
			}
			a.Config = base // reported once
			a.Config.Strategy = api.None
		}
		arms = append(arms, a)
	}
	return arms, errs
}
