package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/triggers"
)

// inFlagTerms is err as the command line tells it: each FieldError that
// came from no file as "--flag: [elem: ]what", anything else as it is.
func inFlagTerms(err error) error {
	fe := herd.Fields(err)
	if !slices.ContainsFunc(fe, func(e *herd.FieldError) bool { return e.Field != "" }) {
		return err
	}
	for i, e := range fe {
		if e.File == "" && e.Field != "" {
			c := *e
			c.Field = "--" + cli.FlagOf(e.Field)
			fe[i] = &c
		}
	}
	return fe
}

// userSet says whether the user set field, by a flag or in a scenario
// file: a problem of two fields is told as the one they set (Blame).
func (o stampedeOptions) userSet(field string) bool {
	return o.Bed.KnobsSet[field] || o.PlanSet[cli.FlagOf(field)] || o.TriggerSet[cli.FlagOf(field)] || slices.Contains(o.TestbedSet, cli.FlagOf(field))
}

// fieldErr is a problem with a flag's value, in the plan's terms.
func fieldErr(field string, err error) *herd.FieldError {
	return &herd.FieldError{Field: field, Msg: err.Error(), Err: err}
}

// inFile points each problem with a value a scenario file set at that
// value: a problem with --rate becomes "s.yaml:4: load.rate: ...", with an
// arm "s.yaml:12: arms[1] (lock): ...", with a gate the gate's own line,
// with an option of the file's trigger that it did not set (command's
// run) the trigger's name. What else the file did not set is left to be
// told in flag terms.
func inFile(err error, path string, f *scenario.File, fromFile map[string]scenario.Setting, reg *triggers.Registry) herd.FieldErrors {
	fe := herd.Fields(err)
	out := make(herd.FieldErrors, len(fe))
	twice := map[string]int{}
	for i, e := range fe {
		c := *e
		out[i] = &c
		if e.File != "" || e.Field == "" {
			continue
		}
		if s, ok := fromFile[cli.FlagOf(e.Field)]; ok {
			c.File, c.Line, c.Field = path, s.Line, s.Path
			if j := slices.Index(s.Values, e.Elem); e.Elem != "" && j >= 0 && j < len(s.Lines) {
				c.Line, c.Field = s.Lines[j], fmt.Sprintf("%s[%d]", s.Path, j)
			}
			continue
		}
		if s, ok := fromFile["trigger"]; ok && reg != nil && slices.ContainsFunc(reg.Options(), func(o triggers.Option) bool { return o.Key == e.Field }) {
			c.File, c.Line, c.Field = path, s.Line, "trigger."+e.Field
			continue
		}
		if e.Field == "arms" && e.Elem != "" {
			skip := 0 // a second name is the arm after the first: the next of them each time
			if errors.Is(e.Err, plan.ErrNamedTwice) {
				twice[e.Elem]++
				skip = twice[e.Elem]
			}
			for j, a := range f.Arms {
				if a.Name == e.Elem {
					if skip > 0 {
						skip--
						continue
					}
					c.File, c.Line, c.Field, c.Elem = path, a.Line, fmt.Sprintf("arms[%d] (%s)", j, a.Name), ""
					break
				}
			}
		}
	}
	return out
}

// triggerFlagsSet are the flags of the trigger and its options that were
// given, on the command line or in a scenario file: what a target file's
// trigger does not override.
func triggerFlagsSet(fs *pflag.FlagSet, plan plan.Plan) map[string]bool {
	set := map[string]bool{}
	if fs.Changed("trigger") {
		set["trigger"] = true
	}
	for _, o := range plan.Triggers.Options() {
		if fs.Changed(o.Flag()) {
			set[o.Flag()] = true
		}
	}
	return set
}

// idleTriggerOptions are the trigger options given (set: the flags, on the
// command line or in a scenario file) that belong to a trigger other than
// the plan's: they would do nothing. A problem bad already has with the
// option (command's run and undo, refused by CheckChosen) is not told
// twice.
func idleTriggerOptions(plan plan.Plan, set map[string]bool, bad herd.FieldErrors) herd.FieldErrors {
	var idle herd.FieldErrors
	for _, o := range plan.Triggers.Options() {
		if !set[o.Flag()] || o.Trigger == plan.Trigger || slices.ContainsFunc(bad, func(e *herd.FieldError) bool { return e.Field == o.Key }) {
			continue
		}
		idle.Add(o.Key, "an option of trigger %s, and the plan's trigger is %s, so it would do nothing (accepted: with trigger %s, or left out)",
			o.Trigger, plan.Trigger, o.Trigger)
	}
	return idle
}

// planFlagsSet are the plan's and the key space's flags given on fs (the
// command line, or a scenario file's): what a target file's plan does not
// override, and what its keys: do.
func planFlagsSet(fs *pflag.FlagSet) map[string]bool {
	set := map[string]bool{}
	for _, f := range append(service.PlanFlags, service.KeyFlags...) {
		if fs.Changed(f) {
			set[f] = true
		}
	}
	return set
}
