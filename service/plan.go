package service

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
)

// PlanFlags are the flags a target file's plan: may set.
var PlanFlags = []string{"rate", "warmup", "before", "after", "timeout"}

// targetPlan applies a target file's plan: each value neither the command
// line nor a scenario file set (g.PlanSet), read as its flag reads it,
// so precedence is defaults < target file < scenario file < flags.
// Problems are at the value's file:line.
func targetPlan(g plan.Given, svc *targets.Target) (plan.Plan, herd.FieldErrors) {
	if svc.File() == nil {
		return g.Plan, nil
	}
	settings := svc.File().Plan.Settings()
	if len(settings) == 0 {
		return g.Plan, nil
	}
	plan := g.Plan
	var bad herd.FieldErrors
	var replaced []targets.PlanSetting
	for _, s := range settings {
		if g.PlanSet[s.Flag] {
			replaced = append(replaced, s) // by the command line or a scenario file
			continue
		}
		var err error
		if plan, err = g.ReadPlan(plan, s.Flag, s.Value); err != nil { // names the accepted form, as a scenario's value
			bad = append(bad, atPlanSetting(svc, s.Flag, err.Error()))
		}
	}
	return plan, append(bad, planAlone(g, svc, replaced)...)
}

// planAlone checks the values of a target file's plan that a flag or a
// scenario file replaced as the file gives them, on the defaults and
// within the file's own limits: a file is valid on its own, whatever replaces its values (docs/bad-input.md).
func planAlone(g plan.Given, svc *targets.Target, replaced []targets.PlanSetting) herd.FieldErrors {
	if len(replaced) == 0 {
		return nil
	}
	plan := g.Defaults
	var bad herd.FieldErrors
	for _, s := range replaced {
		var err error
		if plan, err = g.ReadPlan(plan, s.Flag, s.Value); err != nil {
			bad = append(bad, atPlanSetting(svc, s.Flag, err.Error()))
		}
	}
	for _, e := range append(herd.Fields(plan.Validate()), svc.CheckLimits(plan.Load())...) {
		if e.File == "" && slices.ContainsFunc(replaced, func(s targets.PlanSetting) bool { return s.Flag == flagOf(e.Field) }) {
			bad = append(bad, atPlanSetting(svc, flagOf(e.Field), e.Msg))
		}
	}
	return bad
}

// atPlanSetting is a problem with the target file's plan value of flag.
func atPlanSetting(svc *targets.Target, flag, msg string) *herd.FieldError {
	path := "plan." + flag
	return &herd.FieldError{File: svc.Name, Line: svc.Line(path), Field: path, Msg: msg}
}

// KeyFlags are the key space's flags, which a target file's keys: replaces.
var KeyFlags = []string{"keys", "hot-keys", "zipf"}

// notForTarget refuses the flags (or a scenario file's keys) that would
// be dropped without a word on a target herdbench does not control: the
// bundled testbed's start-up options and its replicas' knobs, and the key
// space's flags where the target file declares its own keys (--hot-keys
// only where it says how many are hot). An arm on a service is its
// headers, query values and hooks, in its target file.
func notForTarget(g plan.Given, svc *targets.Target) herd.FieldErrors {
	bad := TestbedOnly(g, svc.Name)
	f := svc.File()
	if f == nil && !strings.Contains(svc.Request.Path, "{key}") {
		// one path for every request: no key space for these to shape
		for _, k := range KeyFlags {
			if g.PlanSet[k] {
				bad.Add(k, "--target %s has no {key}, so every request asks for that one path and --%s would do nothing (accepted: a URL with {key}, such as http://127.0.0.1:8080/items/{key}; or leave it out)", svc.Name, k)
			}
		}
	}
	if f == nil || svc.Line("keys") == 0 {
		return bad
	}
	for _, k := range KeyFlags {
		if k == "hot-keys" && f.Keys.Hot == 0 && g.PlanSet[k] {
			// hot keys taken from the file's space: no more than it holds
			if size := f.Keys.Size(); int64(g.Plan.HotKeys) > size {
				bad.Add(optionName(k), "%d is more than the %d keys %s declares (keys: at line %d) (accepted: 1 to %d; or keys.hot in the file)",
					g.Plan.HotKeys, size, svc.Name, svc.Line("keys"), size)
			}
		}
		if !g.PlanSet[k] || (k == "hot-keys" && f.Keys.Hot == 0) {
			continue
		}
		bad.Add(optionName(k), "%s declares its keys (keys: at line %d), which replace the key space's flags (accepted: leave it out, or change keys: in the file)", svc.Name, svc.Line("keys"))
	}
	return bad
}

// TestbedOnly refuses the bundled testbed's start-up options and its
// replicas' knobs beside --target name, a service herdbench did not
// start: what a service refuses whatever its target file says.
func TestbedOnly(g plan.Given, name string) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, f := range g.StartSet {
		bad.Add(optionName(f), "starts the bundled testbed, and --target %s is a service herdbench did not start (accepted: leave it out)", name)
	}
	for _, k := range slices.Sorted(maps.Keys(g.KnobsSet)) {
		bad.Add(k, "a knob of the bundled testbed's replicas, which --target %s does not run (accepted: leave it out; an arm on your service is its headers, query values or hooks in its target file: docs/targets.md)", name)
	}
	return bad
}

// atFilePlan points the plan's problems with a value the target file's
// plan: gave (and no flag or scenario file replaced: set) at the file's
// line, plan.rate, rather than at a flag the user never gave.
func atFilePlan(bad herd.FieldErrors, svc *targets.Target, set map[string]bool) herd.FieldErrors {
	f := svc.File()
	if f == nil {
		return bad
	}
	out := make(herd.FieldErrors, len(bad))
	for i, e := range bad {
		out[i] = e
		for _, s := range f.Plan.Settings() {
			if e.File == "" && e.Field == s.Flag && !set[s.Flag] {
				c := *e
				c.File, c.Line, c.Field = svc.Name, svc.Line("plan."+s.Flag), "plan."+s.Flag
				out[i] = &c
			}
		}
	}
	return out
}

// atFileDuration points a problem with an arm's length (warmup + before
// + after over a cap) when no flag or scenario file set any of the three:
// at the value the target file's plan: sets (plan.warmup: 1h), or else at
// its limits.max_duration, rather than at an --after never given.
func atFileDuration(bad herd.FieldErrors, svc *targets.Target, set map[string]bool) herd.FieldErrors {
	if svc.File() == nil || set["after"] || set["warmup"] || set["before"] {
		return bad
	}
	out := slices.Clone(bad)
	for i, e := range bad {
		if e.File != "" || !errors.Is(e.Err, herd.ErrTooLong) {
			continue
		}
		c := *e
		for _, flag := range []string{"after", "warmup", "before"} {
			if line := svc.Line("plan." + flag); line > 0 {
				c.File, c.Line, c.Field = svc.Name, line, "plan."+flag
				break
			}
		}
		if c.File == "" && e.Other != nil {
			c = *e.Other
		}
		out[i] = &c
	}
	return out
}

// atFileAbort points the problems with a stop condition the target file's
// abort: gave at its line, abort[1], rather than at an --abort-on never
// given. One that --abort-on gave too stays the flag's.
func atFileAbort(bad herd.FieldErrors, svc *targets.Target, flags []string) herd.FieldErrors {
	f := svc.File()
	if f == nil {
		return bad
	}
	out := slices.Clone(bad)
	for i, e := range bad {
		j := slices.Index(f.Abort, e.Elem)
		if e.File != "" || e.Field != "abort_on" || j < 0 || slices.Contains(flags, e.Elem) {
			continue
		}
		path := fmt.Sprintf("abort[%d]", j)
		c := *e
		c.File, c.Line, c.Field, c.Elem = svc.Name, svc.Line(path), path, ""
		out[i] = &c
	}
	return out
}

// atFilePlanOther tells a problem of two values as the target file's plan
// value (plan.after: 3s beside command_timeout's default) when the file
// set it, no flag or scenario file replaced it, and neither the file's
// trigger nor a flag set the other value: rather than as an option the
// user never gave.
func atFilePlanOther(bad herd.FieldErrors, svc *targets.Target, g plan.Given) herd.FieldErrors {
	out := slices.Clone(bad)
	for i, e := range bad {
		o := e.Other
		if e.File != "" || o == nil || svc.File() == nil || g.PlanSet[flagOf(o.Field)] || g.Set(e.Field) || svc.Line("trigger."+e.Field) > 0 {
			continue
		}
		if line := svc.Line("plan." + o.Field); line > 0 {
			c := *o
			c.File, c.Line, c.Field = svc.Name, line, "plan."+o.Field
			out[i] = &c
		}
	}
	return out
}

// flagOf is the flag of a plan's field: --hot-keys for hot_keys.
func flagOf(field string) string { return strings.ReplaceAll(field, "_", "-") }

// optionName is the field a flag sets: hot_keys for --hot-keys.
func optionName(flag string) string { return strings.ReplaceAll(flag, "-", "_") }
