package main

import (
	"io"
	"maps"
	"slices"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/replica"
)

// testbedFlags are the flags of the testbed a stampede, run or sweep uses:
// the one it starts when none runs, as testbed up's flags say, and the
// replicas' knobs every arm sends. testbedKind reads them; a user's
// service leaves them at their defaults (service.TestbedOnly refuses them).
type testbedFlags struct {
	Knobs    replica.Config  // the knob flags' values: replica.DefaultConfig where not set
	KnobsSet map[string]bool // the knobs a flag or the scenario file set: every arm sends them
	Replicas int
	// startOptions and the replicas' start-up options (their seed is
	// --seed, their knobs every arm's).
	startOptions
	Startup replica.Options
}

// newTestbedFlags are the testbed's defaults.
func newTestbedFlags() testbedFlags {
	return testbedFlags{Knobs: replica.DefaultConfig, KnobsSet: map[string]bool{}, Replicas: local.DefaultReplicas, Startup: replica.DefaultOptions}
}

// bindStart binds the flags of the testbed the stampede starts; bindKnobs
// those of the knobs (each where the stampede's help lists it).
func (b *testbedFlags) bindStart(fs *pflag.FlagSet) {
	grouped(fs, groupTestbed, func() {
		fs.IntVar(&b.Replicas, "replicas", b.Replicas, "API replicas when the stampede starts the testbed")
		addStartFlags(fs, &b.startOptions, "auto: local when redis-server and the database (PostgreSQL, or MariaDB with --db mariadb) are installed, else docker; when the stampede starts the testbed")
		addStartupFlags(fs, &b.Startup)
	})
}

func (b *testbedFlags) bindKnobs(fs *pflag.FlagSet) {
	grouped(fs, groupKnobs, func() { addKnobFlags(fs, &b.Knobs, b.KnobsSet) })
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

// options are what the stampede asks of the testbed: the one running in
// stateDir, or one started as the flags (set, those given) say, with the
// plan's seed and knobs, holding the plan's keys.
func (b testbedFlags) options(stderr io.Writer, plan experiment.Plan, stateDir string, set []string) testbed.Options {
	replica := b.Startup
	replica.Seed = plan.Seed
	replica.Config = b.Knobs
	o := testbed.Options{StateDir: stateDir, Provider: b.Provider, Replicas: b.Replicas, Items: b.Items,
		Tiers: b.Tiers, Replica: replica, ComposeFile: b.ComposeFile, Keys: plan.Keys, Log: stderr}
	for _, f := range set {
		o.Set = append(o.Set, optionName(f))
	}
	return o
}
