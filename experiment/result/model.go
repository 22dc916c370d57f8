package result

import "github.com/herdbench/herdbench/figure"

// The model's words for an arm's fault: it tips the service (not back
// within the after window) or the service recovers from it.
const (
	ModelTips     = "tips"
	ModelRecovers = "recovers"
)

// ModelExpectation is what the model (package model) expects of an arm
// for the fault it ran, beside its verdict; set after the run by
// predict.Expect, on a slowdb or expire run only (absent otherwise).
type ModelExpectation struct {
	// Expect is ModelTips or ModelRecovers; null when the model gives
	// none: the arm is one it does not cover, or lacks a figure it needs
	// (Why says which)
	Expect *string `json:"expect"`
	// RecoveryMS is the predicted recovery from the fault's end, as the
	// arm's recovery_ms; null when it tips or there is no expectation
	RecoveryMS *int64 `json:"recovery_ms"`
	// ShortestTipMS is the shortest fault of the run's kind that tips
	// it; null when none up to twice the run's fault (at least 8 s) does
	ShortestTipMS *int64       `json:"shortest_tip_ms"`
	Why           string       `json:"why,omitempty"`
	Inputs        []ModelInput `json:"inputs,omitempty"` // what the model was given, each with its source
}

// ModelInput is one of the model's inputs: its value and which figure of
// which run (or which setting) it came from.
type ModelInput struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
}

// Disagrees is the rule the table's model line follows: the model
// expects the arm to recover and it did not (any verdict but recovered),
// or expects it to tip and it recovered. No expectation, no verdict, an
// overloaded arm (which measured no herd) or an aborted one never
// disagrees.
func (m *ModelExpectation) Disagrees(a ArmResult) bool {
	if m == nil || m.Expect == nil || a.Verdict == "" || a.Verdict == Overloaded || a.Aborted != nil {
		return false
	}
	return (*m.Expect == ModelTips) == (a.Verdict == Recovered)
}

var modelFigures = figure.Decl[ModelExpectation]{
	figure.NullWhen("expect", func(m *ModelExpectation) bool { return m.Expect == nil }),
	figure.Opt("recovery_ms", figure.Duration, "ms", func(m *ModelExpectation) **int64 { return &m.RecoveryMS }),
	figure.Opt("shortest_tip_ms", figure.Duration, "ms", func(m *ModelExpectation) **int64 { return &m.ShortestTipMS }),
}
