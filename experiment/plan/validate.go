package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Safety caps: a plan above them is refused before anything is sent.
const (
	MaxRate        = herd.MaxRate     // requests per second
	MaxArmDuration = 10 * time.Minute // warmup + before + after
	MaxArms        = 16
	MaxClients     = 100_000
)

// Validate returns every problem of the plan at once, each a FieldError
// naming its field (as in the results JSON) and the accepted values.
func (p Plan) Validate() error {
	var errs herd.FieldErrors
	errs = append(errs, p.armProblems()...)
	errs = append(errs, p.TriggerSet().Validate()...)
	names := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		names[i] = a.Name
	}
	onSeries, others := result.SeriesGates(p.Gates)
	_, others = classGates(others)             // the target's classes name them: ValidateFor
	onServers, others := lbServerGates(others) // the load balancer names its servers: any name
	known := gates.Validate(others, names, result.GatePaths(), result.GateWords, result.SecondPaths(), "gates")
	errs = append(errs, known...)
	if len(known) == 0 {
		errs = append(errs, p.unproducedGates()...)
	}
	errs = append(errs, gates.Validate(onServers, names, lbServerPathsOf(onServers), nil, nil, "gates")...)
	errs = append(errs, result.SeriesForm(onSeries, names)...)
	errs = append(errs, gates.Validate(p.Abort, names, LivePaths, LiveWords, nil, "abort_on")...)
	for _, c := range p.Abort {
		if _, ok := LiveWords[c.Path]; ok && c.Word != "" && c.Op != "==" {
			errs = append(errs, &herd.FieldError{Field: "abort_on", Elem: c.Expr, Msg: fmt.Sprintf(
				"a stop condition on the %s takes == (accepted: %s == one of %s; an arm is %s until it is decided)",
				c.Path, c.Path, strings.Join(LiveWords[c.Path], ", "), result.Recovering)})
		}
	}
	errs = append(errs, p.EscapeProblems()...)
	errs = append(errs, p.idleBudgets()...)
	errs = append(errs, p.clientProblems()...)
	trig, err := p.TriggerSet().Get(p.Trigger)
	if err != nil {
		errs.Add("trigger", "unknown %q (accepted: %s)", p.Trigger, strings.Join(p.TriggerSet().Names(), ", "))
	}
	for _, t := range p.TriggerSet().Triggers() {
		if c, ok := t.(triggers.Chosen); ok {
			errs = append(errs, c.CheckChosen(t.Name() == p.Trigger)...)
		}
	}
	// a fault that outlasts the arm never shows its end
	var lasts time.Duration
	if l, ok := trig.(triggers.Lasting); ok {
		var key string
		if key, lasts = l.Lasts(); key != "" && lasts >= time.Duration(p.After) {
			errs = append(errs, p.outlasts(key, lasts))
		}
	}
	errs = append(errs, p.shortEscape(lasts)...)
	errs = append(errs, p.loadProblems()...)
	return errs.Err()
}

// outlasts is the problem of a fault that lasts d, by its option key, in
// an after window not longer: the option's, or after's when the user set
// after and left the option at its default (Blame).
func (p Plan) outlasts(key string, d time.Duration) *herd.FieldError {
	return &herd.FieldError{Field: key,
		Msg: fmt.Sprintf("%s is not shorter than after, %s (accepted: shorter than after, so the arm sees the fault end)", herd.Duration(d), p.After),
		Other: &herd.FieldError{Field: "after",
			Msg: fmt.Sprintf("%s is not longer than %s's default, %s, so the arm would not see the fault end (accepted: more than %s; or %s below %s)",
				p.After, key, herd.Duration(d), herd.Duration(d), key, p.After)}}
}

// armProblems checks the arms: how many, unique names, and each arm's
// client policies; what an arm sets of its subject is the subject's to
// check (CheckArms). Whether an arm's name reads is ArmKinds.Parse's to
// say, where it was written.
func (p Plan) armProblems() herd.FieldErrors {
	var errs herd.FieldErrors
	if len(p.Arms) == 0 || len(p.Arms) > MaxArms {
		errs.Add("arms", "%d arms (accepted: 1 to %d)", len(p.Arms), MaxArms)
	}
	seen := map[string]bool{}
	for _, a := range p.Arms {
		bad := func(cause error, format string, args ...any) {
			errs = append(errs, &herd.FieldError{Field: "arms", Elem: a.Name, Msg: fmt.Sprintf(format, args...), Err: cause})
		}
		if seen[a.Name] {
			bad(ErrNamedTwice, "named twice (accepted: each arm once)")
		}
		seen[a.Name] = true
		if a.Throttle != nil {
			if err := retry.CheckThrottle(*a.Throttle); err != nil {
				bad(err, "throttle: %v", err)
			}
		}
	}
	return errs
}

// ArmChecker is a subject that checks what an arm sets of it (its knobs,
// its strategy, its edge policy) before anything starts; the testbed's
// does (testbed/subject).
type ArmChecker interface {
	// CheckArm is every problem of what a sets, each an error of its own
	CheckArm(a arm.Arm) []error
}

// CheckArms is every arm's problems as c finds them, each of field arms,
// the arm's name its element.
func (p Plan) CheckArms(c ArmChecker) herd.FieldErrors {
	var errs herd.FieldErrors
	for _, a := range p.Arms {
		for _, e := range c.CheckArm(a) {
			errs = append(errs, &herd.FieldError{Field: "arms", Elem: a.Name, Msg: e.Error(), Err: e})
		}
	}
	return errs
}

// loadProblems checks the load, the clients and the timeline.
func (p Plan) loadProblems() herd.FieldErrors {
	var errs herd.FieldErrors
	bad := errs.Add
	if p.Repeat < 0 || p.Repeat > MaxRepeat {
		bad("repeat", "%d out of range (accepted: 1 to %d runs of each arm)", p.Repeat, MaxRepeat)
	}
	if p.Rate < 1 || p.Rate > MaxRate {
		bad("rate", "%d out of range (accepted: 1 to %d requests/s)", p.Rate, MaxRate)
	}
	if err := retry.CheckThrottle(p.Throttle); err != nil {
		bad("throttle", "%v", err)
	}
	if !herd.Finite(p.Critical) || p.Critical < 0 || p.Critical > 1 {
		bad("critical", "%g out of range (accepted: 0 to 1, the share of requests marked critical)", p.Critical)
	}
	if p.Clients < 1 || p.Clients > MaxClients {
		bad("clients", "%d out of range (accepted: 1 to %d)", p.Clients, MaxClients)
	}
	if p.Keys < 1 {
		bad("keys", "%d out of range (accepted: 1 or more)", p.Keys)
	}
	switch { // keys out of range says so once: no hot_keys problem follows from it
	case p.HotKeys < 1:
		bad("hot_keys", "%d out of range (accepted: 1 to keys, %d)", p.HotKeys, p.Keys)
	case p.Keys >= 1 && p.HotKeys > p.Keys:
		errs = append(errs, &herd.FieldError{Field: "hot_keys",
			Msg: fmt.Sprintf("%d is more than keys, %d (accepted: 1 to keys: fewer hot keys, or more keys)", p.HotKeys, p.Keys),
			Other: &herd.FieldError{Field: "keys",
				Msg: fmt.Sprintf("%d is fewer than hot_keys' default, %d (accepted: %d or more, or a hot_keys of at most %d)", p.Keys, p.HotKeys, p.HotKeys, p.Keys)}})
	}
	if !herd.Finite(p.Zipf) || p.Zipf <= 1 {
		bad("zipf", "%g out of range (accepted: greater than 1)", p.Zipf)
	}
	if p.Timeout <= 0 {
		bad("timeout", "%s (accepted: more than 0)", p.Timeout)
	}
	if p.Warmup < 0 {
		bad("warmup", "%s is negative (accepted: 0 or more, such as 2s)", p.Warmup)
	}
	if p.Before < herd.Duration(time.Second) {
		bad("before", "%s too short (accepted: 1s or more: it is the baseline)", p.Before)
	}
	if p.After < herd.Duration(time.Second) {
		bad("after", "%s too short (accepted: 1s or more)", p.After)
	}
	if p.Duration() > MaxArmDuration {
		field, accepted := "after", fmt.Sprintf("after at most %s, with warmup %s and before %s", MaxArmDuration-p.Duration()+time.Duration(p.After), p.Warmup, p.Before)
		if room := MaxArmDuration - time.Duration(p.Warmup+p.Before); room < time.Second { // no after fits: the longer of the two is to blame
			field, accepted = "warmup", fmt.Sprintf("warmup + before at most %s, leaving after 1s or more", MaxArmDuration-time.Second)
			if p.Before > p.Warmup {
				field = "before"
			}
		}
		errs = append(errs, &herd.FieldError{Field: field, Err: herd.ErrTooLong,
			Msg: fmt.Sprintf("warmup + before + after = %s exceeds the cap of %s per arm (accepted: %s)", p.Duration(), MaxArmDuration, accepted)})
	}
	return errs
}

// ErrNamedTwice is the cause of an arm named as an arm before it: the
// problem is the later arm's.
var ErrNamedTwice = errors.New("an arm named twice")

// triggerOptionsBad says whether errs holds a problem with an option of
// the plan's trigger: what the trigger needs of the target follows from
// them (an outage of a dependency that is none), so it is told once, as
// the option's.
func (p Plan) triggerOptionsBad(errs herd.FieldErrors) bool {
	for _, o := range p.TriggerSet().Options() {
		if o.Trigger == p.Trigger && slices.ContainsFunc(errs, func(e *herd.FieldError) bool { return e.Field == o.Key }) {
			return true
		}
	}
	return false
}

// ValidateFor checks the plan against the target it will run on and the
// subject its arms are applied to (nil: a service), as well as on its
// own: each arm sets what the subject takes, the trigger has what it
// needs of the target, the load keeps to the target's caps, and no gate
// or stop condition reads a figure the target does not let herdbench
// observe. With no target (nil: one only the run will read, as a
// controller's pod does its file), it is the plan's own checks.
func (p Plan) ValidateFor(tg *targets.Target, sub Subject) error {
	if tg == nil {
		return p.Validate()
	}
	errs := herd.Fields(p.Validate())
	if c, ok := sub.(ArmChecker); ok {
		errs = append(errs, p.CheckArms(c)...)
	}
	if trig := p.ChosenTrigger(); trig != nil && !p.triggerOptionsBad(errs) {
		err := triggers.Supported(trig, tg.Caps())
		var option *triggers.OptionNeeds
		if ok := p.SupportedOn(tg.Caps()); errors.As(err, &option) { // the option's value: another trigger would not do
			errs = append(errs, &herd.FieldError{Field: option.Option, Err: err, Msg: err.Error()})
		} else if err != nil && tg.File() == nil && len(ok) > 0 {
			// no file to add to: say what its plug-in accepts
			errs = append(errs, &herd.FieldError{Field: "trigger", Err: err,
				Msg: fmt.Sprintf("%s: %v (accepted on it: %s)", tg.Name, err, strings.Join(ok, ", "))})
		} else if err != nil {
			errs = append(errs, &herd.FieldError{Field: "trigger", Err: err,
				Msg: fmt.Sprintf("%s: %v (the target declares what a trigger may touch)", tg.Name, err)})
		}
	}
	errs = append(errs, tg.CheckLimits(p.Load())...)
	onSeries, rest := result.SeriesGates(p.Gates)
	errs = append(errs, result.SeriesDeclared(onSeries, tg)...)
	errs = append(errs, p.classGatesFor(rest, tg)...)
	obs := tg.Observes()
	for _, set := range []struct {
		field string
		gs    []gates.Gate
		paths []string
	}{{"gates", p.Gates, result.GatePaths()}, {"abort_on", p.Abort, LivePaths}} {
		for _, g := range set.gs {
			bad := func(format string, args ...any) {
				errs = append(errs, &herd.FieldError{Field: set.field, Elem: g.Expr, Msg: fmt.Sprintf(format, args...)})
			}
			switch what := unobserved(obs, g.Path); {
			case !slices.Contains(set.paths, g.Path) && !result.IsLBServerPath(g.Path): // an unknown path: Validate said so
			case what == edgeTier:
				bad("%s is a figure of the edge tier, and %s has none (accepted: a path outside %s, or a testbed started with --tiers 2, by testbed up or by the run)",
					g.Path, tg.Name, strings.Join(tierPaths, " and "))
			case what != "":
				bad("%s names %s, which %s does not let herdbench observe (accepted: a path of what it declares; %s would need %s in the target file)",
					g.Path, what, tg.Name, g.Path, what)
			}
		}
	}
	return errs.Err()
}

// edgeTier is what figures under tierPaths need: a two-tier testbed's
// edge replicas, in front of its API replicas.
const edgeTier = "the edge tier"

// tierPaths are the results a two-tier testbed alone has: the edges'
// policy and counters, and the call chain's layers.
var tierPaths = []string{"edge.*", "layers.*"}

// unobserved names what a figure at path needs that obs lacks, or "".
func unobserved(obs targets.Observes, path string) string {
	switch {
	case strings.HasPrefix(path, "db.") && !obs.DB:
		return "postgres"
	case strings.HasPrefix(path, "cache.") && !obs.Cache:
		return "redis"
	case strings.HasPrefix(path, "api.") && !obs.API:
		return "the testbed's replicas"
	case (strings.HasPrefix(path, "edge.") || strings.HasPrefix(path, "layers.")) && !obs.Layers:
		return edgeTier
	case strings.HasPrefix(path, "lb.") && !obs.LB:
		return "haproxy"
	}
	return ""
}

// SupportedOn are the triggers of the plan's set that caps support.
func (p Plan) SupportedOn(caps triggers.Caps) []string {
	var ok []string
	for _, t := range p.TriggerSet().Triggers() {
		if triggers.Supported(t, caps) == nil {
			ok = append(ok, t.Name())
		}
	}
	return ok
}
