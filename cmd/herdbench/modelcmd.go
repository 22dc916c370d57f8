package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/predict"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/replica"
)

type modelOptions struct {
	File      string
	DBPool    int
	DBTimeout time.Duration
}

func newModelCmd(stdout io.Writer) *cobra.Command {
	opts := modelOptions{DBPool: int(replica.DefaultOptions.DBPoolSize), DBTimeout: replica.DefaultOptions.DBTimeout}
	c := &cobra.Command{
		Use:   "model RESULTS.json",
		Short: "Predict each arm's shortest tipping fault, recovery and escape load from a run",
		Long: `Read a results file that herdbench stampede or run wrote on the testbed with
--trigger slowdb, and print what the model (docs/metastability.md, "The
model") predicts for each arm: whether the run's fault tips the service, the
shortest fault that tips it, the recovery after the fault's end and the
escape load; and every input it used, with its source in the file. With
--trigger expire, the look-aside model ("The look-aside cache's herd"):
whether the run's hot keys tip it, the fewest that do, the recovery
from T, and the escape load down the run's --escape steps (on's when none).

No results file holds the replicas' database pools: give the testbed's
--db-pool and --db-timeout as it ran (their defaults are the testbed's).
An arm the model does not cover is told why, with no number. A results file
with no trigger, an arm without a figure the model needs, or a capacity
of 0 exits 2, naming what is missing and which run would measure it.`,
		Example: `  herdbench model herdbench-results/20261202-061143/results.json
  herdbench model results.json --db-pool 4 --db-timeout 5s`,
		Args: oneArg("model", "a results file", "such as herdbench-results/20261202-061143/results.json"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.File = args[0]
			return modelRun(stdout, opts)
		},
	}
	fs := c.Flags()
	fs.IntVar(&opts.DBPool, "db-pool", opts.DBPool, "the database connections per replica the run had, 1 to 1000 (the testbed's --db-pool)")
	fs.DurationVar(&opts.DBTimeout, "db-timeout", opts.DBTimeout, "the replicas' db-timeout the run had, above 0 (the testbed's --db-timeout)")
	return c
}

func modelRun(stdout io.Writer, opts modelOptions) error {
	switch {
	case opts.DBPool < 1 || opts.DBPool > 1000:
		return cli.UsageErrorf("--db-pool: %d out of range (accepted: 1 to 1000 connections per replica; a capacity of 0 serves nothing)", opts.DBPool)
	case opts.DBTimeout <= 0:
		return cli.UsageErrorf("--db-timeout: %v out of range (accepted: above 0, such as 5s)", opts.DBTimeout)
	}
	rep, err := reporters.ReadJSONFile(opts.File)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	var pools *predict.Pools
	if n := rep.Environment.Replicas; rep.Environment.Target == "testbed" && n > 0 {
		pools = &predict.Pools{Replicas: n, Connections: n * opts.DBPool, DBTimeout: opts.DBTimeout,
			PoolSource:     fmt.Sprintf("--db-pool %d × environment.replicas %d", opts.DBPool, n),
			DeadlineSource: fmt.Sprintf("--db-timeout %v", opts.DBTimeout)}
	}
	arms, err := predict.Results(rep, pools)
	writePredictions(stdout, opts.File, arms)
	if fe := herd.Fields(err); len(fe) > 0 {
		for _, e := range fe {
			e.File = opts.File
		}
		return cli.UsageError{Err: fe}
	}
	return err
}

// writePredictions prints each arm's prediction, or why none, and the
// inputs it used.
func writePredictions(w io.Writer, file string, arms []predict.ArmPrediction) {
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
func writeLookAside(w io.Writer, a predict.ArmPrediction) {
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
func writeMeasured(w io.Writer, a predict.ArmPrediction) {
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
