package main

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/testbed/api"
)

type serveOptions struct {
	Listen string
	API    api.Options
}

func newTestbedServeCmd(stderr io.Writer) *cobra.Command {
	opts := serveOptions{Listen: "127.0.0.1:8080", API: api.DefaultOptions}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run one API replica (testbed up starts these)",
		Long: `Run one API replica: GET /items/{id} cache-aside from Redis (or Memcached)
in front of Postgres (or MariaDB, --db mariadb --mysql DSN), PUT /admin/config
to switch mitigations, POST /admin/reset, /metrics and /healthz. testbed up
starts each replica with this command.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := opts.API.Problems().Err(); err != nil {
				return usageError{err}
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
	addReplicaFlags(fs, &opts.API)
	return c
}

// addServeAddrFlags binds the database's flags of testbed serve.
func addServeAddrFlags(fs *pflag.FlagSet, o *api.Options) {
	fs.StringVar(&o.PostgresDSN, "postgres", "", "Postgres DSN of the app role, with --db postgres")
	fs.StringVar(&o.DB, "db", o.DB, "the items' database: "+strings.Join(api.DBs, ", "))
	fs.StringVar(&o.MySQLDSN, "mysql", "", "with --db mariadb: the app user's DSN, user:password@tcp(host:port)/db (statements go as text: interpolateParams is added)")
}

// requireAddrs says which addresses the chosen cache and database need
// and lack.
func (opts serveOptions) requireAddrs() error {
	o := opts.API
	if err := requireDB(o); err != nil {
		return err
	}
	if o.Cache == api.CacheMemcached {
		if o.MemcachedAddr == "" {
			return usageErrorf("--memcached is required with --cache memcached")
		}
		return nil
	}
	if o.MemcachedAddr != "" {
		return usageErrorf("--memcached is for --cache memcached (accepted: --cache memcached --memcached HOST:PORT, or no --memcached)")
	}
	if o.RedisAddr == "" {
		return usageErrorf("--redis is required")
	}
	return nil
}

// requireDB says what the chosen database needs and lacks: its DSN, and
// no DSN of the other.
func requireDB(o api.Options) error {
	if o.DB == api.DBMariaDB {
		if o.PostgresDSN != "" {
			return usageErrorf("--postgres is for --db postgres (accepted: --db mariadb --mysql DSN, or --db postgres --postgres DSN)")
		}
		if o.MySQLDSN == "" {
			return usageErrorf("--mysql is required with --db mariadb")
		}
		return nil
	}
	if o.MySQLDSN != "" {
		return usageErrorf("--mysql is for --db mariadb (accepted: --db mariadb --mysql DSN, or --db postgres --postgres DSN)")
	}
	if o.PostgresDSN == "" {
		return usageErrorf("--postgres is required")
	}
	return nil
}
