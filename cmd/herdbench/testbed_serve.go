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
			if opts.API.RedisAddr == "" || opts.API.PostgresDSN == "" {
				return usageErrorf("--redis and --postgres are required")
			}
			log := slog.New(slog.NewTextHandler(stderr, nil))
			return api.Run(c.Context(), opts.Listen, opts.API, log)
		},
	}
	fs := c.Flags()
	fs.StringVar(&opts.Listen, "listen", opts.Listen, "address to serve on")
	fs.StringVar(&opts.API.Name, "name", opts.API.Name, "replica name, reported in X-Replica")
	fs.StringVar(&opts.API.RedisAddr, "redis", "", "Redis host:port")
	fs.StringVar(&opts.API.PostgresDSN, "postgres", "", "Postgres DSN of the app role")
	addReplicaFlags(fs, &opts.API)
	return c
}
