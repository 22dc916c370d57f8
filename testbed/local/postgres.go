package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
)

// pgUsers are the unprivileged accounts postgres runs as when herdbench runs
// as root, which postgres refuses.
var pgUsers = []string{"postgres", "nobody"}

// postgresDSN is the DSN of role on host:port.
func postgresDSN(role, addr string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", role, addr, testbed.Database)
}

// startPostgres creates a cluster with initdb, starts postgres on port with
// pg_stat_statements preloaded, creates the extension, the app role and the
// items. It returns the server's version.
func (tb *Testbed) startPostgres(ctx context.Context, port int) (string, error) {
	dir := filepath.Join(tb.cfg.StateDir, "postgres")
	cred, err := pgCredential()
	if err != nil {
		return "", err
	}
	if err := mkdirEmpty(dir, 0o700); err != nil {
		return "", err
	}
	if cred != nil {
		if err := reachable(dir, cred); err != nil {
			return "", err
		}
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return "", fmt.Errorf("give %s to the postgres user: %w", dir, err)
		}
	}
	initLog := filepath.Join(tb.logDir(), "initdb.log")
	initdb := exec.CommandContext(ctx, tb.bins.initdb, "-D", dir, "-U", testbed.Superuser,
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = childAttr(cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.WriteFile(initLog, out, 0o644)
		return "", fmt.Errorf("initdb: %w: %s (log: %s)", err, lastLine(string(out)), initLog)
	}
	p, err := tb.spawn(ctx, "postgres", syscall.SIGINT, cred,
		tb.bins.postgres, "-D", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		"-c", "shared_preload_libraries=pg_stat_statements",
		"-c", "pg_stat_statements.track=top",
		"-c", "max_connections=200",
		// the testbed's data is thrown away at down: durability buys nothing
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	if err != nil {
		return "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	admin := postgresDSN(testbed.Superuser, addr)
	admin = strings.Replace(admin, "/"+testbed.Database+"?", "/postgres?", 1)
	var version string
	p.ready = func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return conn.QueryRow(ctx, "SHOW server_version").Scan(&version)
	}
	err = tb.waitReady(ctx, p, p.ready)
	if err != nil {
		return "", err
	}
	if err := seed(ctx, admin, postgresDSN(testbed.Superuser, addr), tb.cfg.Items); err != nil {
		return "", fmt.Errorf("%w (log: %s)", err, p.log)
	}
	tb.status.Postgres = postgresDSN(testbed.Superuser, addr)
	version, _, _ = strings.Cut(version, " ")
	return version, nil
}

// seed creates the database, pg_stat_statements, the app role and the items.
func seed(ctx context.Context, adminDSN, dbDSN string, items int) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{testbed.Database}.Sanitize())
	conn.Close(ctx)
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	conn, err = pgx.Connect(ctx, dbDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil {
		return fmt.Errorf("create extension pg_stat_statements: %w: install the contrib modules (`apt-get install postgresql-contrib` on older Debian/Ubuntu)", err)
	}
	if _, err := conn.Exec(ctx, "CREATE ROLE "+pgx.Identifier{testbed.AppRole}.Sanitize()+" LOGIN"); err != nil {
		return fmt.Errorf("create role: %w", err)
	}
	return api.Seed(ctx, conn, items, testbed.AppRole)
}

// pgCredential is nil unless herdbench runs as root; then it is the first of
// pgUsers that exists.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range pgUsers {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("postgres refuses to run as root and none of the users %s exists: create one (`useradd --system postgres`)", strings.Join(pgUsers, ", "))
}

// reachable checks that cred's user can reach dir: every parent must let
// others search it, since postgres runs as that user.
func reachable(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		owner := st != nil && st.Uid == cred.Uid
		if !owner && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("state dir %s: postgres runs as uid %d (it refuses root) and cannot enter %s (mode %s): choose a --state-dir under /tmp or another world-searchable directory",
				filepath.Dir(dir), cred.Uid, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
