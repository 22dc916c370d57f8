package plan

import (
	"slices"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
)

// idleBudgets refuses a retry budget with no retries to bound: the
// plan's, when no arm that takes it retries; an arm's own, when the arm
// does not retry. Either would do nothing, and the arm would read as
// bounded.
func (p Plan) idleBudgets() herd.FieldErrors {
	var errs herd.FieldErrors
	retries := func(a arm.Arm) bool {
		r := p.ClientsOf(a).Retry
		return r.Kind != "" && r.Kind != retry.None && r.Retries > 0
	}
	if p.Budget.Kind != "" && len(p.Arms) > 0 && !slices.ContainsFunc(p.Arms, func(a arm.Arm) bool { return a.Budget == nil && retries(a) }) {
		errs.Add("retry_budget", "%s bounds the clients' retries, and no arm it applies to retries, so it would do nothing (accepted: with --retry or an arm's retry=..., or left out)", p.Budget)
	}
	for _, a := range p.Arms {
		if a.Budget != nil && a.Budget.Kind != "" && !retries(a) {
			errs = append(errs, &herd.FieldError{Field: "arms", Elem: a.Name,
				Msg: "retry_budget=" + a.Budget.String() + " bounds the arm's retries, and it makes none, so it would do nothing (accepted: with a retry policy that retries, or left out)"})
		}
	}
	return errs
}
