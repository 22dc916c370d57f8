package main

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"

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
		Long: `Run one API replica: GET /items/{id} cache-aside from Redis in front of
Postgres, PUT /admin/config to switch mitigations, POST /admin/reset,
/metrics and /healthz. testbed up starts each replica with this command.`,
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
	fs.StringVar(&opts.API.PostgresDSN, "postgres", "", "Postgres DSN of the app role")
	addReplicaFlags(fs, &opts.API)
	return c
}

// requireAddrs says which addresses the chosen cache needs and lacks.
func (opts serveOptions) requireAddrs() error {
	o := opts.API
	if o.Cache == api.CacheMemcached {
		if o.MemcachedAddr == "" || o.PostgresDSN == "" {
			return usageErrorf("--memcached and --postgres are required with --cache memcached")
		}
		return nil
	}
	if o.MemcachedAddr != "" {
		return usageErrorf("--memcached is for --cache memcached (accepted: --cache memcached --memcached HOST:PORT, or no --memcached)")
	}
	if o.RedisAddr == "" || o.PostgresDSN == "" {
		return usageErrorf("--redis and --postgres are required")
	}
	return nil
}
