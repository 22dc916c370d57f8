package result

import (
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/gates"
)

// GatePaths lists every path a gate may name: the figures of an arm's
// results, sorted, with those of every trigger's detail
// (trigger.detail.lost: the writes trigger's). The model's (model.*)
// are none: a prediction, set after the gates are judged, not a
// measurement.
func GatePaths() []string {
	return slices.DeleteFunc(SchemaPaths(false), func(p string) bool { return strings.HasPrefix(p, "model.") })
}

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
// arm, on its medians and its most common verdict, and a gate over
// seconds on every run's seconds (SecondsOf).
func CheckGates(gs []gates.Gate, arms []ArmResult) []gates.Result {
	named := make([]gates.Arm, 0, len(arms))
	for _, a := range arms {
		nums := a.Figures()
		maps.Copy(nums, seriesFigures(a.Prometheus)) // prometheus.NAME.AGG
		words, _ := gates.Words(a)
		seconds := map[string][]gates.Window{}
		for _, g := range gs {
			if _, done := seconds[g.Path]; g.Share > 0 && !done {
				seconds[g.Path] = SecondsOf(a, g.Path)
			}
		}
		named = append(named, gates.Arm{Name: a.Name, Figures: nums, Words: words, Runs: len(a.Runs), Seconds: seconds})
	}
	if out := gates.Check(gs, named); out != nil {
		return out
	}
	return []gates.Result{}
}
