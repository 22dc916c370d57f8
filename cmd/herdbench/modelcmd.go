package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/predict"
	"github.com/herdbench/herdbench/reporters"
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
	predict.Write(stdout, opts.File, arms)
	if fe := herd.Fields(err); len(fe) > 0 {
		for _, e := range fe {
			e.File = opts.File
		}
		return cli.UsageError{Err: fe}
	}
	return err
}
