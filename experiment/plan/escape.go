package plan

import (
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
)

// EscapeValue is --escape as text, for a flag (pflag's Value): it sets
// P.Escape, nil for off.
type EscapeValue struct{ P *Plan }

func (v EscapeValue) String() string {
	if v.P == nil || v.P.Escape == nil {
		return "off"
	}
	return v.P.Escape.String()
}

func (v EscapeValue) Set(s string) error {
	e, err := verdict.ParseEscape(s)
	if err != nil {
		return err
	}
	v.P.Escape = e
	return nil
}

func (EscapeValue) Type() string { return "on|SHARES[:LIMIT]" }

// EscapeProblems are what is wrong with p's escape: its own form, and a
// stop condition that would end the arm where the escape begins.
func (p Plan) EscapeProblems() herd.FieldErrors {
	var errs herd.FieldErrors
	if p.Escape == nil {
		return nil
	}
	if err := p.Escape.Check(); err != nil {
		errs.Add("escape", "%v (accepted: %s)", err, verdict.EscapeForms)
	}
	for _, c := range p.Abort {
		if c.Path == "verdict" && c.Word == result.Metastable {
			errs = append(errs, &herd.FieldError{Field: "abort_on", Elem: c.Expr, Msg: "ends the arm where --escape begins to step its load down (accepted: one or the other; --escape ends the arm once its escape is found or its steps are over)"})
		}
	}
	return errs
}
