package result

import (
	"slices"
	"strings"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/triggers"
)

// An arm's figures are declared once, in armFigures (figure_table.go),
// each with its unit and kind, a trigger's detail's beside its type in
// package triggers; gates read figures, repeats take their medians, and
// the results contract's table (contract.go) names each one's source and
// window.

// Figures are the figures of a by path: what a gate reads.
func (a ArmResult) Figures() map[string]*float64 {
	out := map[string]*float64{}
	for _, f := range FiguresOf(&a) {
		out[f.Path] = f.Value()
	}
	return out
}

// FiguresOf are the figures of *a, settable through it, sorted by path.
func FiguresOf(a *ArmResult) []figure.Figure {
	c := &figure.Collector{}
	ArmFigures.Walk(a, "", c)
	slices.SortFunc(c.Out, func(a, b figure.Figure) int { return strings.Compare(a.Path, b.Path) })
	return c.Out
}

// ownFigures are figuresOf(a) once every pointer and map the figures lie
// under is a' own copy: setting them writes nothing a shares with another
// value (a repeat's median run with its representative).
func ownFigures(a *ArmResult) []figure.Figure {
	c := &figure.Collector{Own: true}
	ArmFigures.Walk(a, "", c)
	return c.Out
}

// FigurePaths are the paths of every number v's type may hold, sorted:
// nil pointers as if set, fields omitempty leaves out too; a map's keys
// none, a trigger's detail its own type's. What a gate may name. v is an
// *ArmResult, *RequestFigures or *LBServer.
func FigurePaths(v any) []string {
	c := &figure.Collector{Schema: true}
	switch x := v.(type) {
	case *ArmResult:
		ArmFigures.Walk(x, "", c)
	case *RequestFigures:
		requestFigures.Walk(x, "", c)
	case *LBServer:
		lbServerFigures.Walk(x, "", c)
	}
	return c.Paths()
}

// SchemaPaths are figurePaths of an arm with every trigger's detail;
// names: with a map's figures under NAME (requests.NAME.p99_ms), the
// paths each of which has a row in the results contract (contract.go).
func SchemaPaths(names bool) []string {
	c := &figure.Collector{Schema: true, Names: names}
	for _, t := range triggers.Default().Triggers() {
		ArmFigures.Walk(&ArmResult{Trigger: TriggerResult{Detail: t.Detail()}}, "", c)
	}
	return c.Paths()
}
