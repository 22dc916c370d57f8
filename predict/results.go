package predict

import (
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/model"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/triggers"
)

// ArmPrediction is the model's answer for one arm of a results file:
// a prediction from the inputs listed, or a refusal's note and no
// number.
type ArmPrediction struct {
	Name       string
	Fault      time.Duration     // the run's fault: slowdb_for
	Prediction *model.Prediction // nil when refused, or an expire run's
	// LookAside is the look-aside model's answer for an expire run's
	// arm; nil when refused, or a slowdb run's
	LookAside *LookAsidePrediction
	Refused   string // why the model does not cover the arm
	Inputs    []sweep.Input
	// Verdict and RecoveryMS are what the run measured, to set beside
	// the prediction: the arm's verdict and recovery_ms (from the
	// fault's end, as the model's)
	Verdict    string
	RecoveryMS *int64
	Escape     *result.EscapeResult // the run's, with --escape
}

// Results predicts, for each arm of a stampede's (or run's) results, the
// fault it ran: whether it tips, the shortest fault that tips it, the
// recovery and the escape load, with the inputs of Of. pools are the
// testbed's. An arm the model does not cover gets Refused; a results
// file with no trigger, an arm missing a figure the model needs, or an
// input the model cannot run on (a capacity of 0) is a herd.FieldErrors
// (their File left for the caller), one per problem, each naming the
// figure and the run that would measure it, returned beside the arms
// that could be predicted.
func Results(rep *experiment.Report, pools *Pools) ([]ArmPrediction, error) {
	if rep.Plan.Trigger == "" {
		return nil, herd.FieldErrors{{Field: "plan.trigger", Msg: "none, and the model predicts a fault's effect " +
			"(accepted: the results of a run with a trigger: herdbench stampede --trigger slowdb on the testbed measures what it needs)"}}
	}
	var out []ArmPrediction
	var problems herd.FieldErrors
	for i, a := range rep.Arms {
		ap, problem := predictArm(rep.Plan, rep.Arms, i, pools)
		if problem != "" {
			problems = append(problems, armProblem(i, a.Name, problem))
			continue
		}
		out = append(out, ap)
	}
	if len(problems) > 0 {
		return out, problems
	}
	return out, nil
}

// predictArm predicts one arm of rep for its fault; a problem when the
// arm lacks a figure the model needs or the model cannot run on its
// inputs.
func predictArm(p plan.Plan, arms []result.ArmResult, i int, pools *Pools) (ArmPrediction, string) {
	if p.Trigger == "expire" {
		return predictLookAside(p, arms, i, pools, true)
	}
	a := arms[i]
	var fault time.Duration
	if s, ok := p.ChosenTrigger().(triggers.Slowdown); ok {
		_, fault = s.Slowdown()
	}
	runs := runsOf(a)
	// the longest fault the model looks at for the shortest tip: the
	// sweeps' 8 s, or twice the run's fault when that is longer
	maxFault := max(model.DefaultOptions.MaxFault, 2*fault)
	ap := ArmPrediction{Name: a.Name, Fault: fault, Verdict: a.Verdict, RecoveryMS: a.RecoveryMS, Escape: a.Escape}
	in, err := Of(p, runs, pools, maxFault)
	ap.Inputs = in.List
	if problem, stop := refusal(&ap, err); stop {
		return ap, problem
	}
	ap.Inputs = append(ap.Inputs, sweep.Input{Name: "fault", Value: ms(fault), Unit: "ms", Source: "plan.trigger_options.slowdb_for"})
	pr, err := model.Predict(in.Service, in.Clients, model.Fault{Slower: in.Slower, Duration: fault}, in.Options)
	if err != nil {
		return ap, fmt.Sprintf("the model cannot run on its inputs: %v", err)
	}
	ap.Prediction = &pr
	return ap, ""
}

// refusal sorts a mapping's error: a figure missing or inputs the model
// cannot run on (a problem, returned), or an arm it does not cover
// (ap.Refused); stop when there was an error.
func refusal(ap *ArmPrediction, err error) (problem string, stop bool) {
	var r *Refusal
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &r) && r.Missing:
		return r.Why, true
	case r != nil:
		ap.Refused = r.Why
		return "", true
	}
	return fmt.Sprintf("the model cannot run on its inputs: %v", err), true
}

func armProblem(i int, name, msg string) *herd.FieldError {
	return &herd.FieldError{Field: fmt.Sprintf("arms[%d]", i), Elem: name, Msg: msg}
}
