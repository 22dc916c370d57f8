package predict

import (
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// Expect sets beside each arm's verdict of a slowdb run what the model
// expects of the fault it ran (arms[].model): tips or recovers, the
// recovery and the shortest tipping fault predicted, and the inputs it
// used. An arm the model does not cover, or whose runs lack a figure it
// needs, gets a null expectation and the reason (why), not an error:
// the run stands. A run of another trigger is left as it is: the model's
// fault is slowdb's. pools reads the testbed's (nil on a service), once
// and only on a slowdb run.
func Expect(rep *experiment.Report, pools func() *Pools) {
	if rep == nil || rep.Plan.Trigger != "slowdb" {
		return
	}
	pp := pools()
	for i := range rep.Arms {
		a := &rep.Arms[i]
		ap, problem := predictArm(rep.Plan, *a, pp)
		m := &result.ModelExpectation{Inputs: ap.Inputs, Why: ap.Refused}
		switch p := ap.Prediction; {
		case problem != "":
			m.Why = problem
		case p != nil:
			word := result.ModelRecovers
			if p.Tips {
				word = result.ModelTips
			}
			m.Expect, m.RecoveryMS, m.ShortestTipMS = &word, p.RecoveryMS, p.ShortestTipMS
		}
		a.Model = m
	}
}
