package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// serve's database flags: a database that is not one, or a DSN the
// database does not take, or none, is a usage error (exit 2) naming the
// flag and what it accepts, before anything is dialed.
func TestServeDBFlags(t *testing.T) {
	base := []string{"testbed", "serve", "--listen", "127.0.0.1:0", "--redis", "127.0.0.1:1"}
	mysql := "app:pw@tcp(127.0.0.1:1)/herdbench"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown db", []string{"--db", "oracle", "--postgres", "postgres://x@127.0.0.1:1/db"}, `--db: "oracle" is not a database (accepted: postgres, mariadb)`},
		{"mariadb without its dsn", []string{"--db", "mariadb"}, "--mysql: empty, and db mariadb needs the app user's DSN (accepted: a go-sql-driver DSN"},
		{"mariadb beside postgres's dsn", []string{"--db", "mariadb", "--mysql", mysql, "--postgres", "postgres://x@127.0.0.1:1/db"}, "--postgres is for --db postgres"},
		{"a mysql dsn on postgres", []string{"--mysql", mysql, "--postgres", "postgres://x@127.0.0.1:1/db"}, "--mysql: a MySQL DSN is for db mariadb, and the db is postgres"},
		{"postgres without its dsn", nil, "--postgres is required"},
		{"a dsn the driver cannot read", []string{"--db", "mariadb", "--mysql", "app@127.0.0.1/x"}, "--mysql: default addr for network '127.0.0.1' unknown (accepted: a go-sql-driver DSN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append(append([]string{}, base...), tc.args...)
			if code := run(context.Background(), args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("herdbench %s = exit %d, %q; want exit 2 saying %q", strings.Join(args, " "), code, stderr.String(), tc.want)
			}
		})
	}
}
