package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/providers"
	"github.com/herdbench/herdbench/testbed/replica"
)

// addProviderFlag binds --provider; help says what auto does in cmd.
func addProviderFlag(fs *pflag.FlagSet, p *string, auto string) {
	cli.NonEmptyVar(fs, p, "provider", testbed.Auto, strings.Join(providers.Default().Names(), ", "), "which provider runs the testbed: "+strings.Join(providers.Default().Names(), ", ")+" ("+auto+")")
}

// startOptions are the flags that say which testbed to start, beside
// --replicas and --state-dir: testbed up's, which the stampede and run take
// too, with the same names and help.
type startOptions struct {
	Provider    string
	Items       int
	Tiers       int
	ComposeFile string
}

func addStartFlags(fs *pflag.FlagSet, o *startOptions, auto string) {
	addProviderFlag(fs, &o.Provider, auto)
	fs.IntVar(&o.Items, "items", local.DefaultItems, "items seeded into the database (Postgres or MariaDB)")
	fs.IntVar(&o.Tiers, "tiers", testbed.OneTier, "1: the API replicas; 2: also one edge replica per API replica in front of them, calling them over HTTP (status lists them under edge; the stampede's clients attack them)")
	cli.NonEmptyVar(fs, &o.ComposeFile, "compose-file", compose.DefaultFile, "a compose file, such as "+compose.DefaultFile+", the default", "the docker provider's compose file, in the herdbench repository")
}

// addStartupFlags binds a replica's start-up options: its pools and
// timeouts, which no arm changes.
func addStartupFlags(fs *pflag.FlagSet, o *replica.Options) {
	fs.Int32Var(&o.DBPoolSize, "db-pool", o.DBPoolSize, "database connections per replica (Postgres or MariaDB), 1 to 1000")
	fs.IntVar(&o.RedisPoolSize, "redis-pool", o.RedisPoolSize, "Redis connections per replica, 1 to 10000")
	fs.DurationVar(&o.DBTimeout, "db-timeout", o.DBTimeout, "bound on one item query, pool wait included")
	fs.DurationVar(&o.RedisTimeout, "redis-timeout", o.RedisTimeout, "dial, read and write timeout of Redis commands")
	fs.StringVar(&o.Cache, "cache", o.Cache, "the replicas' item cache: "+strings.Join(replica.Caches, ", ")+" (memcached: write-invalidate refresh and notify refused, no pub/sub; docs/testbed.md)")
	fs.StringVar(&o.DB, "db", o.DB, "the replicas' database: "+strings.Join(replica.DBs, ", ")+" (mariadb: docs/testbed.md, \"On MariaDB\")")
}

// startupFlags are the flags of addStartupFlags, and startFlags those of
// addStartFlags with --replicas: what the stampede tells the testbed it
// starts (testbed.Options.Set).
var (
	startupFlags = []string{"db-pool", "redis-pool", "db-timeout", "redis-timeout", "cache", "db"}
	startFlags   = append([]string{"provider", "items", "tiers", "compose-file", "replicas"}, startupFlags...)
)

// optionName is a flag's name as testbed.Options.Set spells it.
func optionName(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// testbedError is err as the command line tells it: problems with the
// testbed's options are the user's (exit 2).
func testbedError(err error) error {
	var fe herd.FieldErrors
	if errors.As(err, &fe) {
		return cli.UsageError{Err: err}
	}
	return err
}

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

// warnIgnored says what a running testbed does not have of what the
// flags asked for.
func warnIgnored(stderr io.Writer, ignored []testbed.Mismatch) {
	for _, m := range ignored {
		flag := "--" + cli.FlagOf(m.Option)
		if m.Has == "" {
			fmt.Fprintf(stderr, "warning: %s ignored: it applies when a testbed starts, and one runs already (testbed down, then up %s, to change it)\n", flag, flag)
			continue
		}
		fmt.Fprintf(stderr, "warning: %s %s ignored: the running testbed has %s (testbed down, then up %s %s, to change it)\n",
			flag, m.Asked, m.Has, flag, m.Asked)
	}
}

// stopTestbed stops what run owns, saying so, within two minutes of its
// own: the command's context may have ended (Ctrl-C).
func stopTestbed(ctx context.Context, stderr io.Writer, run *testbed.Running) {
	if !run.Owned() {
		return
	}
	fmt.Fprintf(stderr, "stopping the %s testbed\n", run.Provider.Name())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if err := run.Stop(ctx); err != nil {
		fmt.Fprintf(stderr, "warning: stopping the testbed: %v\n", err)
	}
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
		o.Set = append(o.Set, optionName(f))
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
	// startOptions and the replicas' start-up options (their seed is
	// --seed, their knobs every arm's).
	startOptions
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
