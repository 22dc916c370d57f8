package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/triggers"
)

// MariaDB is the items' database with testbed up --db mariadb: Debian's
// mariadbd in a data directory mariadb-install-db makes,
// performance_schema on (its digest table is how db.queries are counted),
// grant tables in force. Root reaches it on its Unix socket only; the
// replicas' user, AppRole, over TCP through toxiproxy.
type MariaDB struct{}

var (
	_ Store      = MariaDB{}
	_ Writable   = MariaDB{}
	_ Unobserved = MariaDB{}
)

func (MariaDB) Name() string          { return herd.MariaDB }
func (MariaDB) Title() string         { return "MariaDB" }
func (MariaDB) Role() Role            { return DB }
func (MariaDB) Addr(a *Addrs) *string { return &a.MariaDB }

// MariaDBDSN is the Go MySQL driver's DSN of user on the testbed's
// database, over net ("tcp" or "unix") at addr: what both providers give
// the replicas and the harness of a MariaDB testbed.
func MariaDBDSN(user, net, addr string) string { return mysql.DSN(user, "", net, addr, Database) }

func (MariaDB) Replica(o *replica.Options, proxied string) {
	o.MySQLDSN = MariaDBDSN(AppRole, "tcp", proxied)
}

func (MariaDB) Flags(o replica.Options) []string {
	if o.MySQLDSN == "" {
		return nil
	}
	return []string{"--mysql", o.MySQLDSN}
}

// Unobserved: the observability stack's exporter and dashboards read
// Postgres.
func (MariaDB) Unobserved() (why, accepted string) {
	return "its Postgres exporter and dashboards read Postgres",
		"accepted with --db mariadb: no --observability; db.* are in the results, from performance_schema"
}

// Find finds mariadbd and mariadb-install-db.
func (MariaDB) Find() (Programs, error) {
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin"} {
			if p := filepath.Join(dir, name); isExecutable(p) {
				return p
			}
		}
		return ""
	}
	server, install := find("mariadbd"), find("mariadb-install-db")
	if server == "" || install == "" {
		return nil, &MissingBinaryError{Program: "mariadbd and mariadb-install-db", Searched: "PATH, /usr/sbin and /usr/local/sbin",
			Debian: "mariadb-server", Homebrew: "mariadb"}
	}
	return Programs{"mariadbd": server, "mariadb-install-db": install}, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// Start initializes MariaDB's data directory, starts mariadbd on port and
// seeds the items as Postgres's. As root, mariadbd runs as the mysql
// user, who owns its directory (mariadbd refuses to run as root).
func (m MariaDB) Start(ctx context.Context, h Host, bins Programs, port int) (string, string, error) {
	var cred *syscall.Credential
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("mysql")
		if err != nil {
			return "", "", fmt.Errorf("running as root, and no mysql user to run mariadbd as (mariadb-server creates it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred, asUser = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, []string{"--user=mysql"}
	}
	dir, err := h.DataDir(herd.MariaDB, 0o755, cred)
	if err != nil {
		return "", "", err
	}
	data := filepath.Join(dir, "data")
	if err := h.Run(ctx, dir, nil, append([]string{bins["mariadb-install-db"], "--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--tmpdir=" + dir}, asUser...)...); err != nil {
		return "", "", err
	}
	socket := filepath.Join(dir, "mysqld.sock")
	var version string
	log, err := h.Spawn(ctx, Process{Name: herd.MariaDB, Stop: syscall.SIGTERM,
		Argv: append([]string{bins["mariadbd"], "--no-defaults",
			"--datadir=" + data, "--socket=" + socket, "--port=" + strconv.Itoa(port),
			"--bind-address=127.0.0.1", "--skip-name-resolve", "--performance-schema=ON",
			"--max-connections=500", "--tmpdir=" + dir, "--pid-file=" + filepath.Join(dir, "mysqld.pid"),
			// the testbed's data is thrown away at down: durability buys nothing
			"--skip-log-bin", "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=0"}, asUser...),
		Ready: func(ctx context.Context) (err error) { // a connection of its own: restarts call it again
			version, err = m.Version(ctx, "root@unix("+socket+")/")
			return err
		}})
	if err != nil {
		return "", "", err
	}
	if err := seedMariaDB(ctx, socket, h.Items()); err != nil {
		return "", "", fmt.Errorf("%w (log: %s)", err, log)
	}
	return MariaDBDSN("root", "unix", socket), version, nil
}

// seedMariaDB creates the database, the replicas' user and the items, as
// root on socket.
func seedMariaDB(ctx context.Context, socket string, items int) error {
	root, err := sql.Open("mysql", "root@unix("+socket+")/")
	if err != nil {
		return err
	}
	defer root.Close()
	for _, q := range []string{
		// mariadb-install-db leaves root without a password over TCP too
		// (127.0.0.1 and ::1): root keeps its socket only
		"DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1'",
		"CREATE DATABASE " + Database,
		fmt.Sprintf("CREATE USER '%s'@'%%'", AppRole),
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	db, err := sql.Open("mysql", MariaDBDSN("root", "unix", socket))
	if err != nil {
		return err
	}
	defer db.Close()
	return api.SeedMariaDB(ctx, db, items, AppRole)
}

// Version asks the server at dsn its version.
func (MariaDB) Version(ctx context.Context, dsn string) (string, error) {
	return mysql.Version(ctx, dsn)
}

// Compose: the mariadb profile's service; the replicas read it from
// HERDBENCH_DB, and HERDBENCH_DB_FLAG and HERDBENCH_DB_DSN, the
// database's flag and its DSN, so that a replica on MariaDB gets --mysql
// and no --postgres.
func (MariaDB) Compose() Compose {
	c := Compose{Port: 3306, Profile: herd.MariaDB, Published: func(hp string) string { return MariaDBDSN("root", "tcp", hp) }}
	c.Env = []string{"HERDBENCH_DB=" + herd.MariaDB, "HERDBENCH_DB_FLAG=--mysql",
		"HERDBENCH_DB_DSN=" + MariaDBDSN(AppRole, "tcp", c.Proxy())}
	return c
}

// Describe: the database a fault breaks is MariaDB, by its role; its
// digest table counts the queries (Open), not pg_stat_statements.
func (MariaDB) Describe(d *Description, proxies map[string]string) {
	if _, ok := proxies[herd.MariaDB]; ok {
		d.Proxies[DB.Dependency()] = herd.MariaDB
	}
}

// Open opens MariaDB as root, whose digest table counts the item queries.
func (MariaDB) Open(ctx context.Context, h *Handles, dsn string) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("mariadb dsn: %w", err)
	}
	db, err := mysql.Open(cfg, h.Program, false, 4)
	if err != nil {
		return fmt.Errorf("mariadb dsn: %w", err)
	}
	h.MySQL = &mysql.DB{DB: db, User: AppRole, Pattern: api.ItemDigestMariaDB}
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("mariadb %s: %w", dsn, err)
	}
	return nil
}

// Likes are the likes and feed tables in MariaDB, once open.
func (MariaDB) Likes(h *Handles) triggers.LikesTable {
	if h.MySQL == nil {
		return nil
	}
	return api.MariaDBLikes{DB: h.MySQL.DB}
}

// WriteStatements reads the write statements' calls and rows in the
// digest table (whose statements apply a write in two or three, in a
// transaction; see docs/testbed.md).
func (MariaDB) WriteStatements(ctx context.Context, h *Handles, role string) (int64, int64, error) {
	m := &mysql.DB{DB: h.MySQL.DB, Pattern: api.WriteDigestMariaDB}
	return m.Totals(ctx)
}
