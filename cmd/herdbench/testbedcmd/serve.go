package testbedcmd

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
)

type serveOptions struct {
	Listen string
	API    replica.Options
}

func newServeCmd(stderr io.Writer) *cobra.Command {
	opts := serveOptions{Listen: "127.0.0.1:8080", API: replica.DefaultOptions}
	c := &cobra.Command{
		Use:         "serve",
		Annotations: map[string]string{cli.BuiltByTestbed: "yes"},
		Short:       "Run one API replica (testbed up starts these)",
		Long: `Run one API replica: GET /items/{id} cache-aside from Redis (or Memcached)
in front of Postgres (or MariaDB, --db mariadb --mysql DSN), PUT /admin/config
to switch mitigations, POST /admin/reset, /metrics and /healthz. testbed up
starts each replica with this command.`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := api.Problems(opts.API).Err(); err != nil {
				return cli.UsageError{Err: err}
			}
			if err := opts.requireAddrs(); err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(stderr, nil))
			return api.Run(c.Context(), opts.Listen, opts.API, log)
		},
	}
	fs := c.Flags()
	fs.StringVar(&opts.Listen, "listen", opts.Listen, "address to serve on")
	fs.StringVar(&opts.API.Name, "name", opts.API.Name, "replica name, reported in X-Replica")
	fs.StringVar(&opts.API.RedisAddr, "redis", "", "Redis host:port (with --cache memcached, optional: the write queue's stream)")
	fs.StringVar(&opts.API.MemcachedAddr, "memcached", "", "Memcached host:port, with --cache memcached")
	addServeAddrFlags(fs, &opts.API)
	AddReplicaFlags(fs, &opts.API)
	return c
}

// addServeAddrFlags binds the database's flags of testbed serve.
func addServeAddrFlags(fs *pflag.FlagSet, o *replica.Options) {
	fs.StringVar(&o.PostgresDSN, "postgres", "", "Postgres DSN of the app role, with --db postgres")
	fs.StringVar(&o.MySQLDSN, "mysql", "", "with --db mariadb: the app user's DSN, user:password@tcp(host:port)/db (statements go as text: interpolateParams is added)")
}

// requireAddrs says which addresses the chosen cache and database need
// and lack, all at once: --redis and --postgres by default.
func (opts serveOptions) requireAddrs() error {
	o := opts.API
	if err := otherDSN(o); err != nil {
		return err
	}
	if o.Cache != replica.CacheMemcached && o.MemcachedAddr != "" {
		return cli.UsageErrorf("--memcached is for --cache memcached (accepted: --cache memcached --memcached HOST:PORT, or no --memcached)")
	}
	var missing []string
	switch {
	case o.Cache == replica.CacheMemcached && o.MemcachedAddr == "":
		missing = append(missing, "--memcached")
	case o.Cache != replica.CacheMemcached && o.RedisAddr == "":
		missing = append(missing, "--redis")
	}
	switch {
	case o.DB == replica.DBMariaDB && o.MySQLDSN == "":
		missing = append(missing, "--mysql")
	case o.DB != replica.DBMariaDB && o.PostgresDSN == "":
		missing = append(missing, "--postgres")
	}
	var with []string
	if o.Cache == replica.CacheMemcached {
		with = append(with, "--cache memcached")
	}
	if o.DB == replica.DBMariaDB {
		with = append(with, "--db mariadb")
	}
	switch {
	case len(missing) == 0:
		return nil
	case len(with) > 0:
		return cli.UsageErrorf("%s required with %s", are(missing), strings.Join(with, " "))
	}
	return cli.UsageErrorf("%s required", are(missing))
}

// are is flags joined with "and", and the verb that agrees with them.
func are(flags []string) string {
	if len(flags) == 1 {
		return flags[0] + " is"
	}
	return strings.Join(flags, " and ") + " are"
}

// otherDSN refuses the DSN of the database not chosen.
func otherDSN(o replica.Options) error {
	if o.DB == replica.DBMariaDB && o.PostgresDSN != "" {
		return cli.UsageErrorf("--postgres is for --db postgres (accepted: --db mariadb --mysql DSN, or --db postgres --postgres DSN)")
	}
	if o.DB != replica.DBMariaDB && o.MySQLDSN != "" {
		return cli.UsageErrorf("--mysql is for --db mariadb (accepted: --db mariadb --mysql DSN, or --db postgres --postgres DSN)")
	}
	return nil
}
