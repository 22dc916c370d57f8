package testbedcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/providers"
	"github.com/herdbench/herdbench/testbed/replica"
)

// addProviderFlag binds --provider; help says what auto does in cmd.
func addProviderFlag(fs *pflag.FlagSet, p *string, auto string) {
	cli.NonEmptyVar(fs, p, "provider", testbed.Auto, strings.Join(providers.Default().Names(), ", "), "which provider runs the testbed: "+strings.Join(providers.Default().Names(), ", ")+" ("+auto+")")
}

// StartOptions are the flags that say which testbed to start, beside
// --replicas and --state-dir: testbed up's, which the stampede and run take
// too, with the same names and help.
type StartOptions struct {
	Provider    string
	Items       int
	Tiers       int
	ComposeFile string
}

// AddStartFlags binds the flags of StartOptions; auto says what
// --provider auto does in the command that binds them.
func AddStartFlags(fs *pflag.FlagSet, o *StartOptions, auto string) {
	addProviderFlag(fs, &o.Provider, auto)
	fs.IntVar(&o.Items, "items", local.DefaultItems, "items seeded into the database (Postgres or MariaDB)")
	fs.IntVar(&o.Tiers, "tiers", testbed.OneTier, "1: the API replicas; 2: also one edge replica per API replica in front of them, calling them over HTTP (status lists them under edge; the stampede's clients attack them)")
	cli.NonEmptyVar(fs, &o.ComposeFile, "compose-file", compose.DefaultFile, "a compose file, such as "+compose.DefaultFile+", the default", "the docker provider's compose file, in the herdbench repository")
}

// AddStartupFlags binds a replica's start-up options: its pools and
// timeouts, which no arm changes.
func AddStartupFlags(fs *pflag.FlagSet, o *replica.Options) {
	fs.Int32Var(&o.DBPoolSize, "db-pool", o.DBPoolSize, "database connections per replica (Postgres or MariaDB), 1 to 1000")
	fs.IntVar(&o.RedisPoolSize, "redis-pool", o.RedisPoolSize, "Redis connections per replica, 1 to 10000")
	fs.DurationVar(&o.DBTimeout, "db-timeout", o.DBTimeout, "bound on one item query, pool wait included")
	fs.DurationVar(&o.RedisTimeout, "redis-timeout", o.RedisTimeout, "dial, read and write timeout of Redis commands")
	fs.StringVar(&o.Cache, "cache", o.Cache, "the replicas' item cache: "+strings.Join(replica.Caches, ", ")+" (memcached: write-invalidate refresh and notify refused, no pub/sub; docs/testbed.md)")
	fs.StringVar(&o.DB, "db", o.DB, "the replicas' database: "+strings.Join(replica.DBs, ", ")+" (mariadb: docs/testbed.md, \"On MariaDB\")")
}

// OptionName is a flag's name as testbed.Options.Set spells it.
func OptionName(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// WithComposeFile is err with the problem of a compose file that is not
// there (or is a directory), when the testbed the run would start is docker's: the run would
// stop at it after its checks (exit 1), and the dry run said nothing.
func WithComposeFile(err error, provider, file string) error {
	if provider != "docker" {
		return err
	}
	why := "no such file"
	switch fi, serr := os.Stat(file); {
	case serr == nil && fi.IsDir():
		why = "a directory"
	case serr == nil:
		return err
	}
	bad := herd.FieldErrors{{Field: "compose_file", Msg: fmt.Sprintf("%q: %s (accepted: the compose file of the herdbench repository, %s from its root, or its path)", file, why, compose.DefaultFile)}}
	var fe herd.FieldErrors
	switch {
	case err == nil:
		return bad
	case errors.As(err, &fe):
		return append(fe, bad...)
	}
	return err // another failure, which the run reports with its own exit code
}

// StartError is err, from Ensure, as the command line tells it: problems
// with the testbed's options are the user's (exit 2).
func StartError(err error) error {
	var fe herd.FieldErrors
	if errors.As(err, &fe) {
		return cli.UsageError{Err: err}
	}
	return err
}

// WarnIgnored says what a running testbed does not have of what the
// flags asked for.
func WarnIgnored(stderr io.Writer, ignored []testbed.Mismatch) {
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

// Stop stops what run owns, saying so, within two minutes of its own: the
// command's context may have ended (Ctrl-C).
func Stop(ctx context.Context, stderr io.Writer, run *testbed.Running) {
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
