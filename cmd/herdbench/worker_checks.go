package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/workers"
)

// workerProblems are those of --workers and what goes with it: its form,
// its reach and token, its vegeta file, and gates on the workers'
// figures without them.
func workerProblems(opts stampedeOptions, plan plan.Plan) herd.FieldErrors {
	bad := herd.Fields(workers.Check(opts.Workers, opts.WorkerCount))
	bad = append(bad, workersReach(opts.Workers, opts.chosen)...) // before the token: no token makes it reach
	bad = append(bad, workerTokenProblems(opts)...)
	bad = append(bad, workerGates(plan.Gates, opts.Workers)...)
	if opts.Workers == "" {
		return bad
	}
	for _, o := range opts.Outputs {
		if f, ok := strings.CutPrefix(o, vegetaFormat+"="); ok && f != "" {
			if err := workers.CheckVegetaFile(f); err != nil {
				bad.Add("output", "%v", err)
			}
		}
	}
	return bad
}

// workersReach refuses workers on another machine sent to a target on
// this machine's loopback (the testbed, or a service at 127.0.0.1): each
// worker would send to its own loopback, where nothing of the target is.
func workersReach(spec string, c plan.Kind) herd.FieldErrors {
	var bad herd.FieldErrors
	remote := remoteWorker(spec)
	if remote == "" || c == nil {
		return bad
	}
	where := c.Local()
	if where == "" {
		return bad
	}
	bad.Add("workers", "%s is on another machine, and %s listens on this machine's loopback: the worker would send to its own (accepted: workers on loopback, such as http://127.0.0.1:7070; or a target they reach by name or address)", remote, where)
	return bad
}

// remoteWorker is the first worker of --workers not on loopback: a
// dns:NAME:PORT whose NAME is not localhost, or a URL's host; "" when
// every worker is on loopback or spec does not read (its own problem).
func remoteWorker(spec string) string {
	if rest, ok := strings.CutPrefix(spec, "dns:"); ok {
		if name, _, found := strings.Cut(rest, ":"); found && !targets.Loopback(name) {
			return spec
		}
		return ""
	}
	for _, s := range strings.Split(spec, ",") {
		if u, err := url.Parse(strings.TrimSpace(s)); err == nil && u.Host != "" && !targets.Loopback(u.Hostname()) {
			return u.Host
		}
	}
	return ""
}

// workerGates refuses gates on the workers' figures without --workers:
// the load is sent from here, and the arm has none.
func workerGates(gs []gates.Gate, spec string) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, g := range gs {
		if spec == "" && strings.HasPrefix(g.Path, "workers.") {
			bad = append(bad, &herd.FieldError{Field: "gates", Elem: g.Expr,
				Msg: fmt.Sprintf("%s is a figure of the workers that send the load, and without --workers it is sent from here, so the gate could only fail (accepted: --workers with the gate, or a gate on another figure)", g.Path)})
		}
	}
	return bad
}
