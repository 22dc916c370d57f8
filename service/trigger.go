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
	"github.com/herdbench/herdbench/triggers"
)

// targetTrigger applies a target file's trigger: its name where neither
// the command line nor a scenario file chose one, and then, when the run's
// trigger is the file's, each of its options that neither set. Problems
// are at their file:line, naming what the file may say.
func targetTrigger(plan plan.Plan, svc *targets.Target, set map[string]bool) (plan.Plan, herd.FieldErrors) {
	f := svc.File()
	if f == nil || f.Trigger == nil {
		return plan, nil
	}
	spec := f.Trigger
	var bad herd.FieldErrors
	at := func(path, format string, args ...any) {
		bad = append(bad, &herd.FieldError{File: svc.Name, Line: svc.Line(path), Field: path, Msg: fmt.Sprintf(format, args...)})
	}
	reg := plan.Triggers
	if _, err := reg.Get(spec.Name); err != nil {
		at("trigger.name", "%q is not a trigger (accepted: %s)", spec.Name, strings.Join(reg.Names(), ", "))
		return plan, bad
	}
	if !set["trigger"] {
		plan.Trigger = spec.Name
	}
	var own []string
	for _, o := range reg.Options() {
		if o.Trigger == spec.Name {
			own = append(own, o.Key)
		}
	}
	var replaced []string
	for _, k := range slices.Sorted(maps.Keys(spec.Options)) {
		i := slices.Index(own, k)
		if i < 0 {
			at("trigger."+k, "not an option of %s (accepted: %s)", spec.Name, strings.Join(append([]string{"name"}, own...), ", "))
			continue
		}
		if plan.Trigger != spec.Name || set[strings.ReplaceAll(k, "_", "-")] {
			replaced = append(replaced, k) // another trigger was chosen, or this option set elsewhere
			continue
		}
		if err := reg.Set(k, spec.Options[k]); err != nil {
			at("trigger."+k, "%v", err)
		}
	}
	// a value the run does not take is still the file's to get right:
	// checked on a copy of the triggers, as the file gives it
	alone := reg.Clone()
	var read []string // those that parse, to be checked
	for _, k := range replaced {
		if err := alone.Set(k, spec.Options[k]); err != nil {
			at("trigger."+k, "%v", err)
			continue
		}
		read = append(read, k)
	}
	for _, e := range alone.Validate() {
		if slices.Contains(read, e.Field) {
			at("trigger."+e.Field, "%s", e.Msg)
		}
	}
	return plan, bad
}

// atFileTrigger points the problems with options of the plan's trigger
// that a target file chose, and that no flag set (command's run, when the
// file's trigger: has none), at the file's trigger: rather than at flags
// the user never gave.
func atFileTrigger(bad herd.FieldErrors, plan plan.Plan, svc *targets.Target, set map[string]bool) herd.FieldErrors {
	f := svc.File()
	if f == nil && !set["trigger"] {
		return AtURLDefaultTrigger(bad, plan, svc)
	}
	if f != nil && f.Trigger == nil && !set["trigger"] {
		return atFileDefaultTrigger(bad, plan, svc)
	}
	if f == nil || f.Trigger == nil || f.Trigger.Name != plan.Trigger || set["trigger"] {
		return bad
	}
	out := make(herd.FieldErrors, len(bad))
	for i, e := range bad {
		out[i] = e
		isOption := slices.ContainsFunc(plan.Triggers.Options(), func(o triggers.Option) bool { return o.Trigger == plan.Trigger && o.Key == e.Field })
		if e.File == "" && e.Field == "trigger" { // the file's trigger, which its target cannot run
			c := *e
			c.File, c.Line, c.Field = svc.Name, svc.Line("trigger.name"), "trigger.name"
			c.Msg = strings.TrimPrefix(c.Msg, svc.Name+": ") // named once, as the place
			if c.Line == 0 {
				c.Line = svc.Line("trigger")
			}
			out[i] = &c
			continue
		}
		if e.File == "" && isOption && !set[strings.ReplaceAll(e.Field, "_", "-")] {
			c := *e
			c.File, c.Line, c.Field = svc.Name, svc.Line("trigger"), "trigger."+e.Field
			out[i] = &c
		}
	}
	return out
}

// atFileDefaultTrigger points the problem of the default trigger, which
// a target file that names none cannot run, at the file's missing
// trigger: rather than at a --trigger the user never gave.
func atFileDefaultTrigger(bad herd.FieldErrors, plan plan.Plan, svc *targets.Target) herd.FieldErrors {
	return atDefaultTrigger(bad, func(u *triggers.Unsupported) *herd.FieldError {
		accepted := "a trigger: naming one it can run, docs/targets.md"
		if ok := plan.SupportedOn(svc.Caps()); len(ok) > 0 {
			accepted = fmt.Sprintf("a trigger: naming one it can run, %s, such as trigger: {name: %s}", strings.Join(ok, ", "), ok[0])
		}
		return &herd.FieldError{File: svc.Name, Field: "trigger",
			Msg: fmt.Sprintf("none, and the default, %s, needs %v (accepted: %s; or --trigger NAME)", u.Trigger, u.Needs, accepted)}
	})
}

// AtURLDefaultTrigger points the problem of the default trigger, which a
// URL target cannot run, at --target: the user gave a URL and no
// --trigger, and is told which triggers the URL can take.
func AtURLDefaultTrigger(bad herd.FieldErrors, plan plan.Plan, svc *targets.Target) herd.FieldErrors {
	return atDefaultTrigger(bad, func(u *triggers.Unsupported) *herd.FieldError {
		accepted := "a target file that gives what it needs, docs/targets.md"
		if ok := plan.SupportedOn(svc.Caps()); len(ok) > 0 {
			accepted = fmt.Sprintf("--trigger %s on it; or %s", strings.Join(ok, " or "), accepted)
		}
		return &herd.FieldError{Field: "target",
			Msg: fmt.Sprintf("%s: no --trigger given, and the default, %s, needs %v (accepted: %s)", svc.Name, u.Trigger, u.Needs, accepted)}
	})
}

// atDefaultTrigger is bad with the default trigger's problem (a trigger
// the target cannot run, told against --trigger) told as tell says.
func atDefaultTrigger(bad herd.FieldErrors, tell func(*triggers.Unsupported) *herd.FieldError) herd.FieldErrors {
	out := slices.Clone(bad)
	for i, e := range bad {
		var u *triggers.Unsupported
		if e.File == "" && e.Field == "trigger" && errors.As(e.Err, &u) {
			told := tell(u)
			told.Err = e.Err
			out[i] = told
		}
	}
	return out
}
