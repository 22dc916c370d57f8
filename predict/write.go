package predict

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/herdbench/herdbench/sweep"
)

// Write prints, for herdbench model, each arm's prediction from file, or
// why none, and the inputs it used.
func Write(w io.Writer, file string, arms []ArmPrediction) {
	fmt.Fprintf(w, "The model's predictions from %s (docs/metastability.md, \"The model\")\n", file)
	for _, a := range arms {
		fmt.Fprintf(w, "\narm %s:\n", a.Name)
		if a.LookAside != nil {
			writeLookAside(w, a)
			continue
		}
		if a.Prediction == nil {
			fmt.Fprintf(w, "  not modelled: %s\n", a.Refused)
			writeInputs(w, a.Inputs)
			continue
		}
		p := a.Prediction
		tips := "no"
		if p.Tips {
			tips = "yes"
		}
		fmt.Fprintf(w, "  the run's fault (%v) tips it:  %s\n", a.Fault, tips)
		fmt.Fprintf(w, "  shortest tipping fault:        %s\n", msOr(p.ShortestTipMS, "none up to the longest looked at"))
		fmt.Fprintf(w, "  recovery after the fault:      %s\n", msOr(p.RecoveryMS, "none: it tips"))
		escape := "none (no fault tips it, or no load down to 1% brings it back)"
		if p.EscapeRate != nil {
			escape = fmt.Sprintf("%g req/s", *p.EscapeRate)
		}
		fmt.Fprintf(w, "  escape load:                   %s\n", escape)
		fmt.Fprintf(w, "  Bronson's band:                %.0f to %.0f req/s\n", p.BandLow, p.BandHigh)
		writeMeasured(w, a)
		writeInputs(w, a.Inputs)
	}
}

// writeLookAside prints the look-aside model's answer for an expire
// run's arm.
func writeLookAside(w io.Writer, a ArmPrediction) {
	p := a.LookAside
	tips := "no"
	if p.Tips {
		tips = "yes"
	}
	tip := "none up to every key"
	if p.TippingHotKeys != nil {
		tip = fmt.Sprintf("%d", *p.TippingHotKeys)
	}
	fmt.Fprintf(w, "  the run's %d hot keys tip it:  %s\n", p.HotKeys, tips)
	fmt.Fprintf(w, "  fewest hot keys that tip it:   %s\n", tip)
	fmt.Fprintf(w, "  recovery from T:               %s\n", msOr(p.RecoveryMS, "none: it tips"))
	escape := "none: the model's runs do not stick at the run's hot keys"
	if e := p.EscapeRPS; e != nil && *e > 0 {
		escape = fmt.Sprintf("%g req/s", *e)
	} else if e != nil {
		escape = "none down to the last step"
	}
	fmt.Fprintf(w, "  escape load:                   %s\n", escape)
	writeMeasured(w, a)
	writeInputs(w, a.Inputs)
}

// writeMeasured prints what the run measured of arm a, beside the model:
// its verdict, recovery and, with --escape, its escape.
func writeMeasured(w io.Writer, a ArmPrediction) {
	escape := ""
	switch e := a.Escape; {
	case e == nil || e.StartMS == nil:
	case e.RPS == nil:
		escape = ", escape none down to its last step"
	default:
		escape = fmt.Sprintf(", escape %g req/s", *e.RPS)
	}
	fmt.Fprintf(w, "  the run measured:              %s, recovery %s%s\n", a.Verdict, msOr(a.RecoveryMS, "none (recovery_ms null)"), escape)
}

func writeInputs(w io.Writer, in []sweep.Input) {
	if len(in) == 0 {
		return
	}
	fmt.Fprintln(w, "  inputs:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, i := range in {
		fmt.Fprintf(tw, "    %s\t%g %s\t%s\n", i.Name, i.Value, i.Unit, i.Source)
	}
	tw.Flush()
}

func msOr(v *int64, none string) string {
	if v == nil {
		return none
	}
	return sweep.Format(float64(*v), sweep.Milliseconds)
}
