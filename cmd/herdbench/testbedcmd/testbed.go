// Package testbedcmd is the `herdbench testbed` commands: up, down and
// status, and the hidden serve, edge and supervise that the testbed runs
// (an API replica, an edge replica, a detached testbed's supervisor). It
// also binds the flags that name the testbed to start (AddStartFlags,
// AddStartupFlags, AddKnobFlags, DefaultStateDir), which stampede, run and
// sweep bind too, and tells what Ensure says the way the command line
// does (StartError, WarnIgnored, Stop). What every command shares, the
// usage error above all, is package cli's.
package testbedcmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/testbed/replica"
)

// New is the `herdbench testbed` command and its subcommands, writing to
// stdout and stderr.
func New(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "testbed",
		Short: "Run the bundled testbed: API replicas with Redis in front of Postgres",
		Long: `The testbed is the service herdbench provokes: API replicas serving items
cache-aside from Redis in front of Postgres, reached through toxiproxy, with
stampede mitigations switchable at run time. The local provider runs it as
plain processes on loopback; it needs redis-server and PostgreSQL, not Docker.
The docker provider runs the same with docker compose (docker-compose.yml).`,
		Args: cobra.NoArgs,
		RunE: cli.ShowHelp,
	}
	c.AddCommand(newUpCmd(stdout, stderr), newDownCmd(stdout), newStatusCmd(stdout), newServeCmd(stderr), newEdgeCmd(stderr),
		newSuperviseCmd(stderr))
	return c
}

// DefaultStateDir is where the local testbed keeps its data, state and logs
// unless --state-dir or HERDBENCH_STATE_DIR say otherwise. It is under the
// temporary directory because postgres, which refuses to run as root, must be
// able to enter it as another user.
func DefaultStateDir() string {
	if d := os.Getenv("HERDBENCH_STATE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("herdbench-%d", os.Getuid()))
}

func addStateDirFlag(fs *pflag.FlagSet, dir *string) {
	fs.StringVar(dir, "state-dir", DefaultStateDir(), "directory of the testbed's data, state file and logs (env HERDBENCH_STATE_DIR)")
}

// AddReplicaFlags binds the options every replica takes, its knobs those
// of o's registry. `testbed up` passes them on to `testbed serve`;
// local.ServeArgs renders the same names.
func AddReplicaFlags(fs *pflag.FlagSet, o *replica.Options) {
	c := &o.Config
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the replica's random source (jitter, xfetch draws); testbed up gives replica i seed+i")
	AddStartupFlags(fs, o)
	fs.StringVar(&c.Strategy, "strategy", c.Strategy, "mitigation: "+strings.Join(c.Registry().Names(), ", ")+", or several joined with + (herdbench mitigations)")
	AddKnobFlags(fs, c, nil)
}

// AddKnobFlags binds a flag to every knob of a replica's run-time config
// (the Knobs of c's registry: Config's own and its mitigations'), each
// the knob's name with dashes. set, when not nil, learns
// the name of every knob a flag or a scenario file sets: what an arm sends
// (replica.PatchOf), the rest staying as the testbed was started.
func AddKnobFlags(fs *pflag.FlagSet, c *replica.Config, set map[string]bool) {
	for _, k := range c.Registry().Knobs() {
		help := k.Help
		if k.Enum != nil {
			help += ": " + strings.Join(k.Enum, ", ")
		}
		fs.Var(knobFlag{KnobValue: k.Value(c), name: k.Name, set: set}, k.Flag(), help)
	}
}

// knobFlag is a knob's flag: it says when it was set.
type knobFlag struct {
	*replica.KnobValue
	name string
	set  map[string]bool
}

func (f knobFlag) Set(s string) error {
	if err := f.KnobValue.Set(s); err != nil {
		return err
	}
	if f.set != nil {
		f.set[f.name] = true
	}
	return nil
}
