package plan

import (
	"fmt"
	"strings"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
)

// classGates splits gs into the gates on a request class's figures
// (requests.NAME.FIGURE) and the rest.
func classGates(gs []gates.Gate) (classes, rest []gates.Gate) {
	for _, g := range gs {
		if strings.HasPrefix(g.Path, "requests.") {
			classes = append(classes, g)
		} else {
			rest = append(rest, g)
		}
	}
	return classes, rest
}

// classGatesFor checks the plan's gates on request classes against tg's
// classes: a class it does not send, or a figure a class does not have,
// is refused with the accepted ones.
func (p Plan) classGatesFor(gs []gates.Gate, tg *targets.Target) herd.FieldErrors {
	onClasses, _ := classGates(gs)
	if len(onClasses) == 0 {
		return nil
	}
	names := make([]string, len(tg.Classes))
	for i, c := range tg.Classes {
		names[i] = c.Name
	}
	arms := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		arms[i] = a.Name
	}
	if len(names) == 0 {
		var errs herd.FieldErrors
		for _, g := range onClasses {
			errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr, Msg: fmt.Sprintf(
				"%s names a request class, and %s sends one request (accepted: requests: in a target file, each class a name)", g.Path, tg.Name)})
		}
		return errs
	}
	paths, words := result.ClassPaths(names)
	return gates.Validate(onClasses, arms, paths, words, result.ClassSecondPaths(names), "gates")
}
