package main

import (
	"errors"
	"io"
	"maps"
	"slices"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// startupFlags are the flags of testbedcmd.AddStartupFlags, and startFlags
// those of testbedcmd.AddStartFlags with --replicas: what the stampede tells
// the testbed it starts (testbed.Options.Set).
var (
	startupFlags = []string{"db-pool", "redis-pool", "db-timeout", "redis-timeout", "cache", "db"}
	startFlags   = append([]string{"provider", "items", "tiers", "compose-file", "replicas"}, startupFlags...)
)

// testbedProblems are the problems with the testbed's options err
// carries (the flags of testbed up the stampede and run take), none when
// err is another failure: one the run reports with its own exit code.
// A problem of two options is told as the one opts' user set (Blame).
func testbedProblems(err error, opts stampedeOptions) herd.FieldErrors {
	var fe herd.FieldErrors
	if errors.As(err, &fe) {
		return fe.Blame(opts.userSet)
	}
	return nil
}

// withTestbed is plan's problems and then bed's, each told once: the
// replicas' knobs are both the plan's and the testbed's it would start.
func withTestbed(plan, bed herd.FieldErrors) herd.FieldErrors {
	out := slices.Clone(plan)
	for _, e := range bed {
		if !slices.ContainsFunc(out, func(p *herd.FieldError) bool { return p.Error() == e.Error() }) {
			out = append(out, e)
		}
	}
	return out
}

// testbed is what the stampede asks of the testbed: the one running, or
// one started as the flags say, with the plan's seed and knobs, holding
// the plan's keys.
func (opts stampedeOptions) testbed(stderr io.Writer, plan plan.Plan) testbed.Options {
	b := opts.Bed
	replica := b.Startup
	replica.Seed = plan.Seed
	replica.Config = b.Knobs
	o := testbed.Options{StateDir: opts.StateDir, Provider: b.Provider, Replicas: b.Replicas, Items: b.Items,
		Tiers: b.Tiers, Replica: replica, ComposeFile: b.ComposeFile, Keys: plan.Keys, Log: stderr}
	for _, f := range opts.TestbedSet {
		o.Set = append(o.Set, testbedcmd.OptionName(f))
	}
	return o
}

// testbedFlags are the flags of the testbed a stampede, run or sweep uses:
// the one it starts when none runs, as testbed up's flags say, and the
// replicas' knobs every arm sends. testbedKind reads them; a user's
// service leaves them at their defaults (service.TestbedOnly refuses them).
type testbedFlags struct {
	Knobs    replica.Config  // the knob flags' values: replica.DefaultConfig where not set
	KnobsSet map[string]bool // the knobs a flag or the scenario file set: every arm sends them
	Replicas int
	// StartOptions and the replicas' start-up options (their seed is
	// --seed, their knobs every arm's).
	testbedcmd.StartOptions
	Startup replica.Options
}

// problems are those of --replicas and of the knobs set, which are every
// arm's: checked once, then each arm's strategy. base is what an arm sends
// of them over the testbed's own config, nil when the knobs have problems
// (reported once, not again with every arm).
func (b testbedFlags) problems() (bad herd.FieldErrors, base admin.Patch) {
	if b.Replicas < 1 || b.Replicas > 64 {
		bad.Add("replicas", "%d out of range (accepted: 1 to 64)", b.Replicas)
	}
	knobs := b.Knobs
	knobs.Strategy = replica.None
	if problems := knobs.Problems(); len(problems) > 0 {
		return append(bad, problems...), nil
	}
	// a knob out of range (NaN) may not even marshal
	return bad, replica.PatchOf(knobs, slices.Sorted(maps.Keys(b.KnobsSet))...)
}

// changed are the flags of names that were given.
func changed(fs *pflag.FlagSet, names []string) []string {
	var out []string
	for _, n := range names {
		if fs.Changed(n) {
			out = append(out, n)
		}
	}
	return out
}
