package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
)

// planFlags are the flags a target file's plan: may set.
var planFlags = []string{"rate", "warmup", "before", "after", "timeout"}

// planFlagsSet are the plan's flags given on fs (the command line, or a
// scenario file's): what a target file's plan does not override.
func planFlagsSet(fs *pflag.FlagSet) map[string]bool {
	set := map[string]bool{}
	for _, f := range planFlags {
		if fs.Changed(f) {
			set[f] = true
		}
	}
	return set
}

// targetPlan applies a target file's plan: each value neither the command
// line nor a scenario file set (opts.PlanSet), read as its flag reads it,
// so precedence is defaults < target file < scenario file < flags.
// Problems are at the value's file:line.
func targetPlan(opts stampedeOptions) (experiment.Plan, herd.FieldErrors) {
	svc := opts.service
	if svc == nil || svc.File() == nil {
		return opts.Plan, nil
	}
	settings := svc.File().Plan.Settings()
	if len(settings) == 0 {
		return opts.Plan, nil
	}
	// the plan's own flags, bound to a copy of it, read each value
	o := opts
	fs := pflag.NewFlagSet("target plan", pflag.ContinueOnError)
	bindStampedeFlags(fs, &o)
	var bad herd.FieldErrors
	for _, s := range settings {
		if opts.PlanSet[s.Flag] {
			continue // the command line's or a scenario file's
		}
		if err := fs.Set(s.Flag, s.Value); err != nil {
			path := "plan." + s.Flag
			bad = append(bad, &herd.FieldError{File: svc.Name, Line: svc.Line(path), Field: path,
				Msg: fmt.Sprintf("%q: %v", s.Value, err)})
		}
	}
	return o.Plan, bad
}
