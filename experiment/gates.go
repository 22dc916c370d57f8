package experiment

import (
	"fmt"
	"maps"

	"github.com/herdbench/herdbench/gates"
)

// GatePaths lists every path a gate may name: the figures of an arm's
// results, sorted, with those of every trigger's detail
// (trigger.detail.lost: the writes trigger's).
func GatePaths() []string { return schemaPaths(false) }

// GateWords are the word paths a gate may name, each with its words:
// verdict == recovered.
var GateWords = map[string][]string{"verdict": Verdicts}

// GateWordsOf are the word paths a gate may name on results of schema:
// GateWords, and on a v1 file its own verdicts, degraded in place of
// recovering (a v1 file's words keep v1's meaning).
func GateWordsOf(schema string) map[string][]string {
	if schema == SchemaV1 {
		return map[string][]string{"verdict": {Recovered, Metastable, Overloaded, Degraded}}
	}
	return GateWords
}

// CheckGates evaluates gs on every finished arm of rep: on a repeated
// arm, on its medians and its most common verdict.
func CheckGates(gs []gates.Gate, arms []ArmResult) []gates.Result {
	named := make([]gates.Arm, 0, len(arms))
	for _, a := range arms {
		nums := a.Figures()
		maps.Copy(nums, seriesFigures(a.Prometheus)) // prometheus.NAME.AGG
		words, _ := gates.Words(a)
		named = append(named, gates.Arm{Name: a.Name, Figures: nums, Words: words, Runs: len(a.Runs)})
	}
	if out := gates.Check(gs, named); out != nil {
		return out
	}
	return []gates.Result{}
}

// Passed says whether the run passes: every gate held and no arm aborted.
func (r *Report) Passed() bool { return len(r.Failures()) == 0 }

// Failures says why the run does not pass, one line per reason.
func (r *Report) Failures() []string {
	var out []string
	if failed := gates.Failed(r.Gates); failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d gates failed", failed, len(r.Gates)))
	}
	for _, a := range r.Arms {
		if len(a.Runs) == 0 && a.Aborted != nil {
			out = append(out, fmt.Sprintf("arm %s was stopped at %+dms: %s", a.Name, a.Aborted.AtMS, a.Aborted.Gate))
		}
		for i, run := range a.Runs { // a repeated arm: every run stopped counts
			if run.Aborted != nil {
				out = append(out, fmt.Sprintf("arm %s, run %d of %d, was stopped at %+dms: %s", a.Name, i+1, len(a.Runs), run.Aborted.AtMS, run.Aborted.Gate))
			}
		}
	}
	return out
}
