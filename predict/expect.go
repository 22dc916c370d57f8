package predict

import (
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// Expect sets beside each arm's verdict of a slowdb run what the model
// expects of the fault it ran (arms[].model): tips or recovers, the
// recovery and the shortest tipping fault predicted, and the inputs it
// used; beside an expire run's, what the look-aside model expects of its
// hot keys' expiry: tips or recovers, and the recovery from T. An arm the
// model does not cover, or whose runs lack a figure it needs, gets a null
// expectation and the reason (why), not an error: the run stands. A run
// of another trigger is left as it is: the models' faults are slowdb's
// and expire's. pools reads the testbed's (nil on a service), once and
// only on such a run.
func Expect(rep *experiment.Report, pools func() *Pools) {
	if rep == nil || (rep.Plan.Trigger != "slowdb" && rep.Plan.Trigger != "expire") {
		return
	}
	pp := pools()
	for i := range rep.Arms {
		a := &rep.Arms[i]
		var ap ArmPrediction
		var problem string
		if rep.Plan.Trigger == "expire" {
			ap, problem = predictLookAside(rep.Plan, rep.Arms, i, pp, false)
		} else {
			ap, problem = predictArm(rep.Plan, rep.Arms, i, pp)
		}
		m := &result.ModelExpectation{Inputs: ap.Inputs, Why: ap.Refused}
		switch p, la := ap.Prediction, ap.LookAside; {
		case problem != "":
			m.Why = problem
		case p != nil:
			m.Expect, m.RecoveryMS, m.ShortestTipMS = expectWord(p.Tips), p.RecoveryMS, p.ShortestTipMS
		case la != nil:
			m.Expect, m.RecoveryMS = expectWord(la.Tips), la.RecoveryMS
		}
		a.Model = m
	}
}

func expectWord(tips bool) *string {
	word := result.ModelRecovers
	if tips {
		word = result.ModelTips
	}
	return &word
}
