package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/triggers"
)

// Postgres is the default database: a cluster of its own (initdb) with
// pg_stat_statements preloaded, whose calls count the item queries.
type Postgres struct{}

var (
	_ Store    = Postgres{}
	_ Writable = Postgres{}
)

func (Postgres) Name() string          { return herd.Postgres }
func (Postgres) Title() string         { return "Postgres" }
func (Postgres) Role() Role            { return DB }
func (Postgres) Addr(a *Addrs) *string { return &a.Postgres }

// PostgresDSN is the DSN of role on the testbed's database at host:port.
func PostgresDSN(role, addr string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", role, addr, Database)
}

func (Postgres) Replica(o *replica.Options, proxied string) {
	o.PostgresDSN = PostgresDSN(AppRole, proxied)
}
func (Postgres) Flags(o replica.Options) []string { return []string{"--postgres", o.PostgresDSN} }

// pgSearchGlobs are where PostgreSQL's server binaries live when they are not
// on PATH: Debian/Ubuntu, then Homebrew on Apple silicon and on Intel.
var pgSearchGlobs = []string{
	"/usr/lib/postgresql/*/bin",
	"/opt/homebrew/opt/postgresql@*/bin",
	"/usr/local/opt/postgresql@*/bin",
}

// Find finds a matching initdb and postgres.
func (Postgres) Find() (Programs, error) {
	dir := postgresBinDir()
	if dir == "" {
		return nil, &MissingBinaryError{Program: "postgres and initdb",
			Searched: "PATH and " + strings.Join(pgSearchGlobs, ", "), Debian: "postgresql", Homebrew: "postgresql@15"}
	}
	return Programs{"initdb": filepath.Join(dir, "initdb"), "postgres": filepath.Join(dir, "postgres")}, nil
}

// postgresBinDir returns a directory holding both initdb and postgres: the
// one on PATH first, else the newest version found in pgSearchGlobs.
func postgresBinDir() string {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real)
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p)
		}
	}
	var dirs []string
	for _, g := range pgSearchGlobs {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	// newest major version first: the number after "postgresql/" or "@"
	version := func(dir string) int {
		s := strings.TrimSuffix(dir, "/bin")
		i := strings.LastIndexAny(s, "/@")
		v, _ := strconv.Atoi(s[i+1:])
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if has(d) {
			return d
		}
	}
	return ""
}

// Start creates a cluster (initdb's, copied: newCluster), starts postgres on port with
// pg_stat_statements preloaded, creates the extension, the app role and
// the items. As root, postgres (which refuses root) runs as one of
// pgUsers, who owns its directory.
func (p Postgres) Start(ctx context.Context, h Host, bins Programs, port int) (string, string, error) {
	cred, err := pgCredential()
	if err != nil {
		return "", "", err
	}
	dir, err := h.DataDir(herd.Postgres, 0o700, cred)
	if err != nil {
		return "", "", err
	}
	if err := newCluster(ctx, h, bins["initdb"], dir, cred); err != nil {
		return "", "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	admin := strings.Replace(PostgresDSN(Superuser, addr), "/"+Database+"?", "/postgres?", 1)
	var version string
	log, err := h.Spawn(ctx, Process{Name: herd.Postgres, Stop: syscall.SIGINT, Cred: cred,
		Argv: []string{bins["postgres"], "-D", dir, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1",
			"-c", "unix_socket_directories=",
			"-c", "shared_preload_libraries=pg_stat_statements",
			"-c", "pg_stat_statements.track=top",
			"-c", "max_connections=200",
			// the testbed's data is thrown away at down: durability buys nothing
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"},
		Ready: func(ctx context.Context) (err error) {
			version, err = p.Version(ctx, admin)
			return err
		}})
	if err != nil {
		return "", "", err
	}
	if err := seedPostgres(ctx, admin, PostgresDSN(Superuser, addr), h.Items()); err != nil {
		return "", "", fmt.Errorf("%w (log: %s)", err, log)
	}
	return PostgresDSN(Superuser, addr), version, nil
}

// seedPostgres creates the database, pg_stat_statements, the app role and
// the items.
func seedPostgres(ctx context.Context, adminDSN, dbDSN string, items int) error {
	conn, err := postgres.Connect(ctx, adminDSN)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+postgres.Identifier(Database))
	conn.Close(ctx)
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	conn, err = postgres.Connect(ctx, dbDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil {
		return fmt.Errorf("create extension pg_stat_statements: %w: install the contrib modules (`apt-get install postgresql-contrib` on older Debian/Ubuntu)", err)
	}
	if _, err := conn.Exec(ctx, "CREATE ROLE "+postgres.Identifier(AppRole)+" LOGIN"); err != nil {
		return fmt.Errorf("create role: %w", err)
	}
	return api.Seed(ctx, conn, items, AppRole)
}

// pgUsers are the unprivileged accounts postgres runs as when herdbench runs
// as root, which postgres refuses.
var pgUsers = []string{"postgres", "nobody"}

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

// Version asks the server at dsn its version: its number alone.
func (Postgres) Version(ctx context.Context, dsn string) (string, error) {
	return postgres.Version(ctx, dsn)
}

func (Postgres) Compose() Compose {
	return Compose{Port: 5432, Published: func(hp string) string { return PostgresDSN(Superuser, hp) }}
}

// Describe counts the item queries in pg_stat_statements, by the app's
// role.
func (Postgres) Describe(d *Description, _ map[string]string) {
	d.Statements = observe.Statements{Text: api.ItemQuery, Fill: api.FillQuery}
	d.Role = AppRole
	d.Proxies[DB.Dependency()] = herd.Postgres
}

// Open opens a small pool as the database's owner.
func (Postgres) Open(ctx context.Context, h *Handles, dsn string) (err error) {
	h.DB, err = postgres.Open(ctx, dsn, 4, nil)
	return err
}

// Likes are the likes and feed tables in Postgres, once open.
func (Postgres) Likes(h *Handles) triggers.LikesTable {
	if h.DB == nil {
		return nil
	}
	return api.PostgresLikes{Pool: h.DB.Pool}
}

// WriteStatements reads the write statements' calls and rows in
// pg_stat_statements.
func (Postgres) WriteStatements(ctx context.Context, h *Handles, role string) (int64, int64, error) {
	return h.DB.StatementTotals(ctx, role, api.WriteStatements)
}
