// Package experiment runs a Plan against a target once per arm, from the
// same starting state each time, and turns what the clients, Postgres and
// Redis saw into a Report.
//
// An arm is a short sequence of steps (arm.go): select it on its Subject,
// fill the cache the same way as every other arm, prepare the trigger,
// load (warmup, before), fire the trigger at T, load on (after), drain,
// and collect the figures. Where the steps differ between the testbed,
// which herdbench controls, and a service it does not, the Subject says
// (subject.go: the testbed's is package testbed/subject, a service's
// package service), and the engine never asks which it has. The engine imports
// nothing of the testbed. Arms run one after another: at once, each
// arm's load would hit the others. A plan that repeats its arms runs them
// in interleaved rounds, and reports each arm's median (repeat.go).
//
// While an arm runs, stop conditions are checked every 100 ms on the last
// second; after all arms, gates on every arm's results.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Env is what Run works with.
type Env struct {
	Target *targets.Target
	// Subject is what each arm is applied to, filled, counted and drained
	// through: its kind's (plan.Kind's Open: the testbed's
	// subject.Testbed, a service's service.Subject); never nil
	Subject  plan.Subject
	Version  string         // herdbench's, for the report
	Progress func(Progress) // called a few times a second; may be nil
	Observer Observer       // sees every request and T as they happen; may be nil
	// Generator sends the load; nil: this process. With workers, requests
	// reach the Observer and the stop conditions as the workers stream
	// them, every 100 ms.
	Generator Generator
	// ResultsDir is where the run's results are written, for a trigger
	// that runs the user's commands to tell them; "" when it writes none.
	ResultsDir string
}

func (e Env) generator() Generator {
	if e.Generator == nil {
		return inProcess{}
	}
	return e.Generator
}

// Run runs every arm of p and returns the report. With p.Repeat, it runs
// rounds: every arm in plan order, then every arm again, each run from the
// same starting state, and each arm of the report is the median of its
// runs (Aggregate). When ctx ends or a run fails, the report holds the
// runs that finished (each arm over the runs it has), is marked partial,
// and the error says why.
func Run(ctx context.Context, p plan.Plan, env Env) (_ *Report, retErr error) {
	// the triggers are the plan's, so the report shows what ran
	p.Triggers = p.TriggerSet()
	if env.Subject == nil { // its kind's subject applies, fills and counts the arms
		return nil, fmt.Errorf("%s: no subject to apply the arms through: set Env.Subject", env.Target.Name)
	}
	if err := p.ValidateFor(env.Target, env.Subject); err != nil {
		return nil, err
	}
	// after the validation: they name the trigger's own detail, which a
	// plan's gates cannot
	p.Gates = withDefaultGates(p.Gates, p.ChosenTrigger())
	trig := p.ChosenTrigger()
	sub := env.Subject
	rep := &Report{Schema: result.Schema, Version: env.Version, Seed: p.Seed, StartedAt: time.Now().UTC(), Plan: p,
		Arms: []result.ArmResult{}, Environment: EnvironmentOf(env.Target)}
	rep.Environment.Herdbench = env.Version
	if c, ok := sub.(plan.Configured); ok {
		rep.Environment.Replica, _ = c.Config(ctx) // without it, the arms' own configs stand
	}
	// a fault whose undo failed, or an arm that failed mid-fault, must not
	// outlive the run: undo what a trigger may have left, on every path
	defer func() {
		if err := env.Target.Rollback(); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("undo the faults the run may have left: %w", err))
		}
	}()
	defer sub.Keep(ctx)()
	clk := newClock()
	rounds := p.Repeat.N()
	runs := make([][]result.ArmResult, len(p.Arms)) // each arm's runs, in run order
	for round := range rounds {
		for i, arm := range p.Arms {
			a := &armRun{p: p, idx: i, arm: arm, trig: trig, env: env.inRound(round, rounds, len(p.Arms), clk, p.Duration()),
				sub: sub, tg: env.Target, clock: clk}
			res, err := a.run(ctx)
			if err != nil && res != nil {
				// it ran whole, and failed after (an undo, an after hook):
				// its results are kept with the error
				runs[i] = append(runs[i], *res)
			}
			if err != nil {
				name := arm.Name
				if rounds > 1 {
					name = fmt.Sprintf("%s, run %d of %d", arm.Name, round+1, rounds)
				}
				rep.Partial = true
				rep.Error = fmt.Sprintf("arm %s: %v", name, err)
				arms, aerr := aggregate(runs, rounds > 1)
				rep.Arms, rep.Gates = arms, result.CheckGates(p.Gates, arms)
				return rep, errors.Join(fmt.Errorf("arm %s: %w", name, err), aerr)
			}
			runs[i] = append(runs[i], *res)
			rep.Saturated = rep.Saturated || res.Load.Saturated
			clk.done(res.Timing)
		}
	}
	arms, err := aggregate(runs, rounds > 1)
	rep.Arms, rep.Gates = arms, result.CheckGates(p.Gates, arms)
	if err != nil {
		rep.Partial, rep.Error = true, err.Error()
	}
	return rep, err
}

// withDefaultGates adds the gates trig brings (triggers.Gater) to gs,
// unless gs has a gate on the same figure of every arm already (a gate
// over its seconds is another).
func withDefaultGates(gs []gates.Gate, trig triggers.Trigger) []gates.Gate {
	g, ok := trig.(triggers.Gater)
	if !ok {
		return gs
	}
	for _, expr := range g.DefaultGates() {
		d, err := gates.Parse(expr)
		if err != nil || slices.ContainsFunc(gs, func(x gates.Gate) bool { return x.Path == d.Path && x.Arm == "" && x.Share == 0 }) {
			continue
		}
		gs = append(slices.Clone(gs), d)
	}
	return gs
}

// EnvironmentOf is where a run on tg runs: the testbed's provider and
// versions, or the target's kind, and this machine.
func EnvironmentOf(tg *targets.Target) Environment {
	e := Environment{Provider: tg.Kind, Target: tg.Name, Replicas: len(tg.Endpoints),
		Redis: tg.Versions["redis"], Postgres: tg.Versions["postgres"],
		Memcached: tg.Versions["memcached"], MariaDB: tg.Versions["mariadb"],
		CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if len(tg.Classes) > 0 {
		e.Requests = result.ClassesOf(tg.Classes)
	}
	if tg.Grants.Provider != "" {
		e.Provider = tg.Grants.Provider
	}
	return e
}

// Service says whether the run was on a service herdbench does not
// control: its provider is the kind of its target, a file or a URL.
func (e Environment) Service() bool {
	return e.Provider == targets.KindFile || e.Provider == targets.KindURL
}
