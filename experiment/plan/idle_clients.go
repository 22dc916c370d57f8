package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/retry"
)

// clientProblems are the clients' policies that cannot take effect: a
// hedge whose delay the attempt's timeout ends first, a policy of the
// plan's that every arm replaces with its own, and an arm whose client
// policies are the plan's own, so it changes nothing.
func (p Plan) clientProblems() herd.FieldErrors {
	var errs herd.FieldErrors
	errs = append(errs, p.hedgesPastTimeout()...)
	errs = append(errs, p.idleClientFlags()...)
	errs = append(errs, p.sameAsNone()...)
	return errs
}

// hedgesPastTimeout refuses a hedge whose delay is not below the client
// timeout: the attempt's deadline ends it before the hedge timer fires
// (load/clients.go), so it never hedges. The plan's hedge is told as
// --hedge, an arm's own as the arm's.
func (p Plan) hedgesPastTimeout() herd.FieldErrors {
	var errs herd.FieldErrors
	why := func(h retry.Hedge) string {
		return fmt.Sprintf("%s is not below the timeout, %s: each attempt ends at its timeout before the hedge would be sent, so it would never fire (accepted: a delay below %s, or a timeout above %s)",
			h.Delay, p.Timeout, p.Timeout, h.Delay)
	}
	if p.Timeout <= 0 { // the timeout's own problem
		return nil
	}
	past := func(h retry.Hedge) bool { return h.Delay > 0 && h.Delay >= time.Duration(p.Timeout) }
	plansTaken := len(p.Arms) == 0
	for _, a := range p.Arms {
		if a.Hedge == nil {
			plansTaken = true
			continue
		}
		if past(*a.Hedge) {
			errs = append(errs, &herd.FieldError{Field: "arms", Elem: a.Name, Msg: "hedge=" + why(*a.Hedge)})
		}
	}
	if plansTaken && past(p.Hedge) {
		errs = append(errs, &herd.FieldError{Field: "hedge", Msg: why(p.Hedge)})
	}
	return errs
}

// clientPolicy is one of the clients' policies a plan sets for every arm
// and an arm may set its own of: its field, whether the plan's is on, and
// whether an arm sets its own.
type clientPolicy struct {
	field, kind string // the plan's field, and the arm kind's key
	on          bool
	armSets     func(arm.Arm) bool
}

func (p Plan) clientPolicies() []clientPolicy {
	return []clientPolicy{
		{"retry", "retry", p.Retry.Kind != "" && p.Retry.Kind != retry.None, func(a arm.Arm) bool { return a.Retry != nil }},
		{"throttle", "throttle", p.Throttle != 0, func(a arm.Arm) bool { return a.Throttle != nil }},
		{"hedge", "hedge", p.Hedge.Delay != 0, func(a arm.Arm) bool { return a.Hedge != nil }},
		{"client_breaker", "client-breaker", p.Breaker != (retry.Breaker{}), func(a arm.Arm) bool { return a.Breaker != nil }},
	}
}

// idleClientFlags refuses a policy of the plan's (--retry, --throttle,
// --hedge, --client-breaker) that every arm replaces with its own: it
// would do nothing. Its default is off, so one that is on was set. The
// retry budget's is idleBudgets'.
func (p Plan) idleClientFlags() herd.FieldErrors {
	var errs herd.FieldErrors
	if len(p.Arms) == 0 {
		return nil
	}
	for _, c := range p.clientPolicies() {
		every := true
		for _, a := range p.Arms {
			every = every && c.armSets(a)
		}
		if c.on && every {
			errs.Add(c.field, "every arm sets its own %s (arms: %s), so it would do nothing (accepted: left out, or an arm without %s=... that takes it)",
				strings.ReplaceAll(c.field, "_", " "), strings.Join(p.armNames(), ", "), c.kind)
		}
	}
	return errs
}

func (p Plan) armNames() []string {
	names := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		names[i] = a.Name
	}
	return names
}

// sameAsNone refuses an arm that sets the clients' policies, each the
// plan's own (retry=none beside --retry none, throttle=0,
// client-breaker=none), beside an arm it is the same as: none (an arm
// that names no strategy keeps the base's, none), or the same strategy
// with nothing set of the clients. It would run the same arm twice, as
// two (hedge=none is refused by its arm kind). Alone, such an arm is the
// comparison's baseline under a name that says so (retry=none beside
// retry=fixed:200ms:4), and kept.
func (p Plan) sameAsNone() herd.FieldErrors {
	var errs herd.FieldErrors
	plans := p.ClientsOf(arm.Arm{})
	noop := func(a arm.Arm) bool { return p.ClientsOf(a) == plans }
	for i, a := range p.Arms {
		if !a.SetsClients() || !noop(a) {
			continue
		}
		j := slices.IndexFunc(p.Arms, func(o arm.Arm) bool {
			return o.Name != a.Name && noop(o) && arm.SameSubject(a, o)
		})
		if j < 0 || (j > i && p.Arms[j].SetsClients()) { // two alike: the later one is told
			continue
		}
		errs = append(errs, &herd.FieldError{Field: "arms", Elem: a.Name, Msg: fmt.Sprintf(
			"sets the clients' policies the plan gives every arm already (%s), so it changes nothing: it is the same as %s (accepted: a policy other than the plan's, such as %s; or leave the arm out)",
			p.clientsString(), p.Arms[j].Name, strings.Join(arm.ClientKinds.Examples(), ", "))})
	}
	return errs
}

// clientsString is the plan's client policies as --arms writes them.
func (p Plan) clientsString() string {
	c := p.ClientsOf(arm.Arm{})
	throttle := "0"
	if c.Throttle != 0 {
		throttle = fmt.Sprint(c.Throttle)
	}
	return fmt.Sprintf("retry=%s, throttle=%s, hedge=%s, client-breaker=%s", c.Retry, throttle, c.Hedge, c.Breaker)
}

// leastEscapeAfter is the least after window in which --escape could
// begin on the arm whose clients are c: the trigger's own length, the
// settle time (settleOf, from the clients' bound: the service's is known
// only once applied), a hold of rows out of band (or the trend's span,
// the longer), then a hold of the first step's rows.
func (p Plan) leastEscapeAfter(c arm.Clients, lasts time.Duration) time.Duration {
	bound := load.Config{Timeout: time.Duration(p.Timeout), Retry: c.Retry}.Bound()
	return lasts + max(verdict.SettleOf(bound, 0)+verdict.RecoveryHold, verdict.TrendSpan) + verdict.RecoveryHold
}

// shortEscape refuses --escape with an after window too short for any arm
// to be judged metastable in it, so the escape would never start.
func (p Plan) shortEscape(lasts time.Duration) herd.FieldErrors {
	if p.Escape == nil || p.After < herd.Duration(time.Second) || p.Timeout <= 0 {
		return nil
	}
	least := time.Duration(0)
	for _, a := range p.Arms {
		least = max(least, p.leastEscapeAfter(p.ClientsOf(a), lasts))
	}
	if len(p.Arms) == 0 || time.Duration(p.After) >= least {
		return nil
	}
	why := fmt.Sprintf("an arm can be judged metastable no sooner than its settle time (at least %s, or the clients' longest deadline) and a hold of %s after the trigger's end, and its first step needs a hold of its own, %s in all, so the escape would never start",
		verdict.MetastableSettle, verdict.RecoveryHold, least)
	return herd.FieldErrors{{Field: "escape",
		Msg: fmt.Sprintf("after, %s, is too short: %s (accepted: after %s or more, or --escape off)", p.After, why, least),
		Other: &herd.FieldError{Field: "after",
			Msg: fmt.Sprintf("%s is too short for --escape: %s (accepted: %s or more, or --escape off)", p.After, why, least)}}}
}
