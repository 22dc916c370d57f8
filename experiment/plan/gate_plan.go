package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/triggers"
)

// unproducedGates refuses gates on figures the plan never produces (a
// burst's release spread without the burst trigger, an escape load
// without --escape): the arm would have no value for them, and the gate
// could only fail, whatever the run did.
func (p Plan) unproducedGates() herd.FieldErrors {
	var errs herd.FieldErrors
	trig := p.ChosenTrigger()
	if trig == nil { // an unknown trigger: its own problem
		return errs
	}
	for _, g := range p.Gates {
		if why, accepted := p.unproduced(trig, g.Path); why != "" {
			errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr,
				Msg: fmt.Sprintf("%s is %s, so the gate could only fail (accepted: %s)", g.Path, why, accepted)})
		}
		if short := p.noWholeSecond(g, trig); g.Share > 0 && short != "" {
			errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr, Msg: short})
		}
	}
	for _, set := range []struct {
		field, what string
		gs          []gates.Gate
	}{{"gates", "the gate", p.Gates}, {"abort_on", "the stop condition", p.Abort}} {
		for _, g := range set.gs {
			if why, accepted := p.unusedClients(g.Path); why != "" {
				errs = append(errs, &herd.FieldError{Field: set.field, Elem: g.Expr,
					Msg: fmt.Sprintf("%s counts %s, so it is 0 whatever the run does and %s is decided before it (accepted: %s)", g.Path, why, set.what, accepted)})
			}
		}
	}
	return errs
}

// noWholeSecond says why a gate over seconds could only fail on the
// plan: its seconds begin at the first row after the settle's end
// (result.SettledMS: the trigger's end, plus the arm's settle, at least
// the clients' whole deadline, verdict.SettleOf), and on some arm it
// names the after window ends before one whole second follows; "" when
// one may on every arm. The service's own bound (the testbed's
// db-timeout) may make the settle longer yet: the run then finds no
// second, and the gate fails measuring none.
func (p Plan) noWholeSecond(g gates.Gate, trig triggers.Trigger) string {
	var lasts time.Duration
	if l, ok := trig.(triggers.Lasting); ok {
		_, lasts = l.Lasts()
	}
	var worst arm.Arm
	settle := time.Duration(-1)
	for _, a := range p.Arms {
		bound := load.Config{Timeout: time.Duration(p.Timeout), Retry: p.ClientsOf(a).Retry}.Bound()
		if s := verdict.SettleOf(bound, 0); (g.Arm == "" || g.Arm == a.Name) && s > settle {
			worst, settle = a, s
		}
	}
	least := lasts + settle + result.RowWidth + time.Second
	if settle < 0 || time.Duration(p.After) >= least {
		return ""
	}
	return fmt.Sprintf("a gate over seconds counts the whole seconds after the arm's settle, and on %s the after window (%s) ends before one: the settle ends %s after T at the soonest (the trigger's end, %s after T, plus the arm's settle, %s: the longest of %s and its clients' whole deadline), and the seconds begin at the first row from it, up to a row later, so the gate could only fail (accepted: --after %s or more with the gate)",
		worst.Name, time.Duration(p.After), lasts+settle, lasts, settle, verdict.MetastableSettle, least)
}

// unusedClients says why the figure at path, a count of what one of the
// clients' policies does, is 0 in every arm (no arm's clients use it),
// and what would make it count; "" when some arm's may.
func (p Plan) unusedClients(path string) (why, accepted string) {
	uses := func(on func(arm.Clients) bool) bool {
		return slices.ContainsFunc(p.Arms, func(a arm.Arm) bool { return on(p.ClientsOf(a)) })
	}
	switch {
	case path == "retries.hedges" && !uses(func(c arm.Clients) bool { return c.Hedge.Delay > 0 }):
		return "the clients' hedged attempts, and no arm hedges", "--hedge DELAY or an arm's hedge=50ms with the gate, or a gate on another figure"
	case path == "http.errors.throttled" && !uses(func(c arm.Clients) bool { return c.Throttle > 0 }):
		return "the requests the clients' adaptive throttling refused, and no arm throttles", "--throttle K or an arm's throttle=2 with the gate, or a gate on another figure"
	case path == "http.errors.client_breaker" && !uses(func(c arm.Clients) bool { return c.Breaker != retry.Breaker{} }):
		return "the requests the clients' own breaker refused, and no arm has one", "--client-breaker or an arm's client-breaker=5:2s with the gate, or a gate on another figure"
	}
	return "", ""
}

// unproduced says why the plan, whose trigger is trig, produces no figure
// at path, and what would; "" when it does, or may.
func (p Plan) unproduced(trig triggers.Trigger, path string) (why, accepted string) {
	name := trig.Name()
	switch {
	case strings.HasPrefix(path, "writes.") && name != "writes":
		return fmt.Sprintf("a figure of the writes trigger, and the plan's trigger is %s", name), "--trigger writes, or a gate on another figure"
	case strings.HasPrefix(path, "burst.") && name != "burst" && name != "writes":
		return fmt.Sprintf("the release of a burst (the burst or writes trigger), and the plan's trigger is %s", name), "--trigger burst, or a gate on another figure"
	case strings.HasPrefix(path, "escape.") && p.Escape == nil:
		return "measured by --escape, which the plan leaves off", "--escape with the gate, or a gate on another figure"
	case strings.HasPrefix(path, "http.critical.") && p.Critical == 0:
		return "a figure of the requests marked critical, and --critical is 0", "--critical above 0 with the gate, or http.* for every request"
	case strings.HasPrefix(path, "trigger.detail."):
		own := result.FigurePaths(&result.ArmResult{Trigger: result.TriggerResult{Detail: trig.Detail()}})
		own = slices.DeleteFunc(own, func(p string) bool { return !strings.HasPrefix(p, "trigger.detail.") })
		if !slices.Contains(own, path) {
			if len(own) == 0 {
				return fmt.Sprintf("a detail of another trigger, and %s reports none", name), "a gate on another figure"
			}
			return fmt.Sprintf("a detail of another trigger than %s", name), "one of " + name + "'s: " + strings.Join(own, ", ")
		}
	}
	return "", ""
}
