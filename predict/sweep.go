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

// Arm is one arm's prediction.
func Arm(res *sweep.Results, a sweep.ArmSweep, pools *Pools) *sweep.Predicted {
	ax := res.Vary
	p := &sweep.Predicted{State: sweep.PredictedRefused, Unit: ax.Unit, Text: "not modelled"}
	if ax.Name != Axis {
		p.Note = "the model predicts how long a slowdb fault must last (" + Axis + "); this sweep varies " + ax.Name
		return p
	}
	var runs []result.ArmResult
	for _, pr := range a.Probed {
		for _, r := range pr.Runs {
			runs = append(runs, r.Result)
		}
	}
	maxFault := time.Duration(ax.To) * time.Millisecond
	in, err := Of(res.Plan, runs, pools, maxFault)
	p.Inputs = in.List
	if err != nil {
		var r *Refusal
		if !errors.As(err, &r) {
			p.Note = "the model refused its inputs: " + err.Error()
		} else {
			p.Note = r.Why
		}
		return p
	}
	tip, found := model.ShortestTip(in.Service, in.Clients, model.Fault{Slower: in.Slower}, in.Options)
	if !found {
		p.State, p.Text = sweep.PredictedNone, "none"
		return p
	}
	v := float64(tip.Milliseconds())
	p.State, p.Value, p.Text = sweep.PredictedFound, &v, sweep.Format(v, ax.Unit)
	if t := a.Tipping; t != nil && t.State == sweep.TipFound && t.Value != nil && *t.Value > 0 {
		off := round(v / *t.Value - 1, 3)
		p.VsMeasured = &off
	}
	return p
}
