package result

import (
	"slices"
	"strings"
	"testing"
)

// The rule of the table's model line: the model and the verdict
// disagree when it expects a recovery the arm did not make, or a tip the
// arm recovered from; an overloaded or aborted arm, an arm without a
// verdict and one without an expectation never do.
func TestModelDisagreesRule(t *testing.T) {
	tips, recovers := ModelTips, ModelRecovers
	for _, c := range []struct {
		expect  *string
		verdict string
		aborted bool
		want    bool
	}{
		{&recovers, Recovered, false, false},
		{&recovers, Metastable, false, true},
		{&recovers, Recovering, false, true},
		{&tips, Recovered, false, true},
		{&tips, Metastable, false, false},
		{&tips, Recovering, false, false},
		{&recovers, Overloaded, false, false},
		{&tips, Overloaded, false, false},
		{&tips, Recovered, true, false},
		{&recovers, "", false, false},
		{nil, Metastable, false, false},
	} {
		a := ArmResult{Verdict: c.verdict, Model: &ModelExpectation{Expect: c.expect}}
		if c.aborted {
			a.Aborted = &Abort{}
		}
		word := "null"
		if c.expect != nil {
			word = *c.expect
		}
		if got := a.Model.Disagrees(a); got != c.want {
			t.Errorf("model %s, verdict %q, aborted %v: disagrees %v; want %v", word, c.verdict, c.aborted, got, c.want)
		}
	}
	if (*ModelExpectation)(nil).Disagrees(ArmResult{Verdict: Metastable}) {
		t.Error("an arm without a model disagrees; want not")
	}
}

// The model's figures are in the results (and the contract) but no
// gate's: they are set after the gates are judged.
func TestModelFiguresAreNoGates(t *testing.T) {
	if !slices.Contains(SchemaPaths(false), "model.recovery_ms") {
		t.Error("model.recovery_ms is not a figure of the results; want it declared")
	}
	for _, p := range GatePaths() {
		if strings.HasPrefix(p, "model.") {
			t.Errorf("gate path %s; want none of the model's", p)
		}
	}
}
