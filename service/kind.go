// Package service is a user's service as a kind of subject
// (plan.Kind): a target file or a base URL names it, herdbench does
// not control it, and its arms are the headers, query values and hooks its
// target file declares. It holds the service's rules of a run: the plan
// and trigger a target file sets, where a problem with them points (the
// file's line rather than a flag never given), the options it refuses,
// the hosts it may touch and how it opens; and Subject, which applies an
// arm by its hooks, headers and query values, warms the hot keys and
// drains on every source its target declares (drain.go).
//
// Guarantees: nothing is contacted before Open; every problem names the
// flag or the target file's line, as herd.FieldErrors.
package service

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
)

// Kind is the service a target file or a base URL describes.
type Kind struct{ Svc *targets.Target }

var _ plan.Kind = Kind{}

// Plan is g's plan with the target file's plan: and refuses the options
// it would drop without a word.
func (k Kind) Plan(g plan.Given) (plan.Plan, herd.FieldErrors) {
	plan, bad := targetPlan(g, k.Svc)
	return plan, append(bad, notForTarget(g, k.Svc)...)
}

// Arms are the target file's trigger and arms: those --arms names, or
// those a scenario file names, or else the target file's own.
func (k Kind) Arms(plan plan.Plan, g plan.Given) (plan.Plan, herd.FieldErrors) {
	svc := k.Svc
	plan, bad := targetTrigger(plan, svc, g.TriggerSet)
	var names []string
	switch {
	case g.ArmsSet:
		names = g.Arms
	case g.Scenario != nil && len(g.Scenario.Arms) > 0:
		// a scenario's arms name the target file's; their knobs and
		// strategies are the testbed's, which a service does not take
		declared := make([]string, len(svc.Arms))
		for i, a := range svc.Arms {
			declared[i] = a.Name
		}
		for _, a := range g.Scenario.Arms {
			if a.Strategy != nil || len(a.Settings(g.Scenario)) > 0 {
				bad = append(bad, &herd.FieldError{File: g.ScenarioPath, Line: a.Line, Field: fmt.Sprintf("%s (%s)", a.Path(), a.Name),
					Msg: fmt.Sprintf("a strategy, knobs or client policies of its own, for %s, which herdbench does not control (accepted: the name of one of its arms, %s, baseline, or a client arm such as %s)",
						svc.Name, strings.Join(declared, ", "), arm.ClientKinds.Examples()[0])})
			}
			names = append(names, a.Name)
		}
	}
	plan, err := forService(plan, svc, names)
	return plan, append(bad, herd.Fields(err)...)
}

// Problems are bad's, at the target file's lines where it gave the value.
func (k Kind) Problems(plan plan.Plan, g plan.Given, bad herd.FieldErrors) herd.FieldErrors {
	bad = atFileTrigger(atFilePlanOther(bad, k.Svc, g), plan, k.Svc, g.TriggerSet)
	bad = atFileDuration(bad, k.Svc, g.PlanSet)
	return atFileAbort(atFilePlan(bad, k.Svc, g.PlanSet), k.Svc, g.Abort)
}

func (k Kind) Describe() (*targets.Target, plan.Subject) {
	return k.Svc, &Subject{Target: k.Svc}
}

// Hosts: the end probe is one of the service's hosts, checked with the
// rest against --allow-host.
func (k Kind) Hosts(p plan.Plan, g plan.Given) error {
	if server, on := p.LBEndServer(); on && k.Svc.HAProxy == nil {
		return plan.NoLoadBalancer(server)
	}
	if probe := p.EndProbe(); probe != "" {
		k.Svc.AddHost(probe, "--ended-when")
	}
	return k.Svc.CheckHosts(g.Allow)
}

// Local is the first of the service's endpoints on loopback, "" when none is.
func (k Kind) Local() string {
	for _, e := range k.Svc.Endpoints {
		if u, err := url.Parse(e); err == nil && targets.Loopback(u.Hostname()) {
			return e
		}
	}
	return ""
}

// Open confirms a run that leaves loopback and connects to the service's
// stores.
func (k Kind) Open(ctx context.Context, p plan.Plan, g plan.Given) (plan.Opened, error) {
	if err := g.Confirm(k.Svc); err != nil {
		return plan.Opened{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := k.Svc.Connect(cctx)
	cancel()
	if err != nil { // a field error is the target file's to fix: performance_schema off, a user without grants
		return plan.Opened{}, err
	}
	sub := &Subject{Target: k.Svc, Limit: LimitFor(k.Svc, p)}
	return plan.Opened{Target: k.Svc, Subject: sub, Close: k.Svc.Close}, nil
}

// forService fits p to a service herdbench does not control: each of
// names is an arm its target file declares, "baseline" (the service as it
// is) or a client arm; with names nil, the file's arms, or baseline when
// it has none. The key space, the hot keys and the stop conditions are the
// target file's.
func forService(p plan.Plan, tg *targets.Target, names []string) (plan.Plan, error) {
	var errs herd.FieldErrors
	declared := make([]string, len(tg.Arms))
	for i, a := range tg.Arms {
		declared[i] = a.Name
	}
	if names == nil {
		names = declared
		if len(names) == 0 {
			names = []string{"baseline"}
		}
	}
	p.Arms = nil
	for _, n := range names {
		arm, err := serviceArm(tg, n, declared)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.Arms = append(p.Arms, arm)
	}
	if tg.Space != nil {
		p.Keys = int(min(tg.Space.Size(), int64(1<<31-1)))
		p.HotKeys = len(tg.Hot(p.HotKeys))
	}
	// the file's may repeat one of --abort-on's (the README's staging run
	// does): one condition, checked once, and the dry run says so
	fromFlags := len(p.Abort)
	for i, s := range tg.Abort {
		g, err := gates.Parse(s)
		same := func(o gates.Gate) bool { return err == nil && gates.Same(o, g) }
		if j := slices.IndexFunc(p.Abort[:fromFlags], same); j >= 0 {
			path := fmt.Sprintf("abort[%d]", i)
			p.AbortMerged = append(p.AbortMerged, fmt.Sprintf("%s's %s (line %d) is --abort-on's %q: kept once", tg.Name, path, tg.Line(path), p.Abort[j].Expr))
			continue
		}
		if j := slices.IndexFunc(p.Abort[fromFlags:], same); j >= 0 {
			err = fmt.Errorf("the same stop condition as %q, given twice (accepted: each once)", p.Abort[fromFlags+j].Expr)
		}
		if err != nil {
			path := fmt.Sprintf("abort[%d]", i)
			errs = append(errs, &herd.FieldError{File: tg.Name, Line: tg.Line(path), Field: path, Msg: err.Error(), Err: err})
			continue
		}
		p.Abort = append(p.Abort, g)
	}
	return p, errs.Err()
}

// serviceArm is the arm called name on a service: selected as its target
// file says, the service as it is, or a client arm.
func serviceArm(tg *targets.Target, name string, declared []string) (arm.Arm, *herd.FieldError) {
	am := arm.Arm{Name: name, Select: &arm.Select{}}
	for _, a := range tg.Arms {
		if a.Name == name {
			am.Select = &arm.Select{Headers: a.Headers, Query: a.Query, Before: a.Before, After: a.After, Secret: a.Secret, Endpoints: a.Endpoints, Backend: a.Backend}
			return am, nil
		}
	}
	if name == "baseline" {
		return am, nil
	}
	notAnArm := func() *herd.FieldError {
		accepted := slices.Clone(declared)
		if !slices.Contains(accepted, "baseline") {
			accepted = append(accepted, "baseline")
		}
		return &herd.FieldError{Field: "arms", Elem: name, Msg: fmt.Sprintf("not an arm of %s (accepted: %s, or a client policy: %s; "+
			"strategies such as lock are the bundled testbed's: an arm of your service is declared under arms: in its target file, "+
			"as the headers, query values or hooks that switch it, docs/targets.md)",
			tg.Name, strings.Join(accepted, ", "), strings.Join(arm.ClientKinds.Examples(), ", "))}
	}
	for part := range strings.SplitSeq(name, "+") {
		if key, _, ok := strings.Cut(part, "="); ok && !slices.Contains(arm.ClientKinds.Keys(), key) {
			return arm.Arm{}, notAnArm() // another subject's kind (write=, edge-...=): not a service's
		}
	}
	arms, errs := arm.ClientKinds.Parse(arm.NameSpecs([]string{name}), nil, nil)
	if len(errs) > 0 {
		return arm.Arm{}, errs[0] // one name: one problem
	}
	client := arms[0]
	if client.Retry == nil && client.Throttle == nil && client.Hedge == nil && client.Breaker == nil {
		return arm.Arm{}, notAnArm()
	}
	am.Retry, am.Throttle, am.Hedge, am.Breaker = client.Retry, client.Throttle, client.Hedge, client.Breaker
	return am, nil
}
