package main

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

func newTestbedCmd(stdout, stderr io.Writer) *cobra.Command {
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
	c.AddCommand(newTestbedUpCmd(stdout, stderr), newTestbedDownCmd(stdout), newTestbedStatusCmd(stdout), newTestbedServeCmd(stderr), newTestbedEdgeCmd(stderr),
		newTestbedSuperviseCmd(stderr))
	return c
}

// defaultStateDir is where the local testbed keeps its data, state and logs
// unless --state-dir or HERDBENCH_STATE_DIR say otherwise. It is under the
// temporary directory because postgres, which refuses to run as root, must be
// able to enter it as another user.
func defaultStateDir() string {
	if d := os.Getenv("HERDBENCH_STATE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("herdbench-%d", os.Getuid()))
}

func addStateDirFlag(fs *pflag.FlagSet, dir *string) {
	fs.StringVar(dir, "state-dir", defaultStateDir(), "directory of the testbed's data, state file and logs (env HERDBENCH_STATE_DIR)")
}

// addReplicaFlags binds the options every replica takes. `testbed up` passes
// them on to `testbed serve`; local.ServeArgs renders the same names.
func addReplicaFlags(fs *pflag.FlagSet, o *replica.Options) {
	c := &o.Config
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the replica's random source (jitter, xfetch draws); testbed up gives replica i seed+i")
	addStartupFlags(fs, o)
	fs.StringVar(&c.Strategy, "strategy", c.Strategy, "mitigation: "+strings.Join(c.Registry().Names(), ", ")+", or several joined with + (herdbench mitigations)")
	addKnobFlags(fs, c, nil)
}

// addKnobFlags binds a flag to every knob of a replica's run-time config
// (the Knobs of c's registry: Config's own and its mitigations'), each
// the knob's name with dashes. set, when not nil, learns
// the name of every knob a flag or a scenario file sets: what an arm sends
// (replica.PatchOf), the rest staying as the testbed was started.
func addKnobFlags(fs *pflag.FlagSet, c *replica.Config, set map[string]bool) {
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
