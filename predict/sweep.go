package predict

import (
	"errors"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/model"
	"github.com/herdbench/herdbench/sweep"
)

// Axis is the one magnitude the model predicts: how long slowdb lasts.
const Axis = "slowdb_for"

// Sweep sets each arm's prediction beside its measured tipping point, on
// a bisection (a grid has none); pools are the testbed's (nil on a
// service). Every arm gets one: a number, none, or a refusal that says
// why.
func Sweep(res *sweep.Results, pools *Pools) {
	if res.Vary == nil {
		return
	}
	for i := range res.Arms {
		res.Arms[i].Predicted = Arm(res, res.Arms[i], pools)
	}
}

// Arm is one arm's prediction: a slowdb_for sweep's by the fluid model
// (the retry storm), an expire sweep of hot_keys by the look-aside
// model (the refill).
func Arm(res *sweep.Results, a sweep.ArmSweep, pools *Pools) *sweep.Predicted {
	ax := res.Vary
	p := &sweep.Predicted{State: sweep.PredictedRefused, Unit: ax.Unit, Text: "not modelled"}
	var runs []result.ArmResult
	for _, pr := range a.Probed {
		for _, r := range pr.Runs {
			runs = append(runs, r.Result)
		}
	}
	switch {
	case ax.Name == sweep.HotKeys && res.Plan.Trigger == "expire":
		return vsMeasured(lookAsideArm(res, runs, pools, p), a)
	case ax.Name != Axis:
		p.Note = "the model predicts how long a slowdb fault must last (" + Axis + "); this sweep varies " + ax.Name
		return p
	}
	maxFault := time.Duration(ax.To) * time.Millisecond
	in, err := Of(res.Plan, runs, pools, maxFault)
	p.Inputs = in.List
	if err != nil {
		p.Note = noteOf(err)
		return p
	}
	tip, found := model.ShortestTip(in.Service, in.Clients, model.Fault{Slower: in.Slower}, in.Options)
	if !found {
		p.State, p.Text = sweep.PredictedNone, "none"
		return p
	}
	v := float64(tip.Milliseconds())
	p.State, p.Value, p.Text = sweep.PredictedFound, &v, sweep.Format(v, ax.Unit)
	return vsMeasured(p, a)
}

// vsMeasured sets how far p's number falls from a's measured tipping
// point, when both have one.
func vsMeasured(p *sweep.Predicted, a sweep.ArmSweep) *sweep.Predicted {
	if t := a.Tipping; p.Value != nil && t != nil && t.State == sweep.TipFound && t.Value != nil && *t.Value > 0 {
		off := round(*p.Value / *t.Value - 1, 3)
		p.VsMeasured = &off
	}
	return p
}

// noteOf is a refusal's note: its why, or what the model refused.
func noteOf(err error) string {
	var r *Refusal
	if !errors.As(err, &r) {
		return "the model refused its inputs: " + err.Error()
	}
	return r.Why
}
