package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/triggers"
)

// unproducedGates refuses gates on figures the plan never produces (a
// burst's release spread without the burst trigger, an escape load
// without --escape): the arm would have no value for them, and the gate
// could only fail, whatever the run did.
func (p Plan) unproducedGates() herd.FieldErrors {
	var errs herd.FieldErrors
	trig := p.trigger()
	if trig == nil { // an unknown trigger: its own problem
		return errs
	}
	for _, g := range p.Gates {
		if why, accepted := p.unproduced(trig, g.Path); why != "" {
			errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr,
				Msg: fmt.Sprintf("%s is %s, so the gate could only fail (accepted: %s)", g.Path, why, accepted)})
		}
	}
	return errs
}

// unproduced says why the plan, whose trigger is trig, produces no figure
// at path, and what would; "" when it does, or may.
func (p Plan) unproduced(trig triggers.Trigger, path string) (why, accepted string) {
	name := trig.Name()
	switch {
	case strings.HasPrefix(path, "writes.") && name != "writes":
		return fmt.Sprintf("a figure of the writes trigger, and the plan's trigger is %s", name), "--trigger writes, or a gate on another figure"
	case strings.HasPrefix(path, "burst.") && name != "burst" && name != "writes":
		return fmt.Sprintf("the release of a burst (the burst or writes trigger), and the plan's trigger is %s", name), "--trigger burst, or a gate on another figure"
	case strings.HasPrefix(path, "escape.") && p.Escape == nil:
		return "measured by --escape, which the plan leaves off", "--escape with the gate, or a gate on another figure"
	case strings.HasPrefix(path, "http.critical.") && p.Critical == 0:
		return "a figure of the requests marked critical, and --critical is 0", "--critical above 0 with the gate, or http.* for every request"
	case strings.HasPrefix(path, "trigger.detail."):
		own := figurePaths(&ArmResult{Trigger: TriggerResult{Detail: trig.Detail()}})
		own = slices.DeleteFunc(own, func(p string) bool { return !strings.HasPrefix(p, "trigger.detail.") })
		if !slices.Contains(own, path) {
			if len(own) == 0 {
				return fmt.Sprintf("a detail of another trigger, and %s reports none", name), "a gate on another figure"
			}
			return fmt.Sprintf("a detail of another trigger than %s", name), "one of " + name + "'s: " + strings.Join(own, ", ")
		}
	}
	return "", ""
}
