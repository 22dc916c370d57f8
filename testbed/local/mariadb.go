package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
)

// The testbed's MariaDB, when it is the replicas' database (testbed up
// --db mariadb): Debian's mariadbd on a free loopback port, in a data
// directory of the state directory's that mariadb-install-db makes,
// performance_schema on (its digest table is how db.queries are counted),
// grant tables in force. Root reaches it on its Unix socket only; the
// replicas' user, testbed.AppRole, over TCP through toxiproxy.

// mariadbPart is MariaDB's name among the testbed's processes, logs,
// versions and proxies.
const mariadbPart = herd.MariaDB

// findMariaDB locates mariadbd and mariadb-install-db.
func findMariaDB() (server, install string, err error) {
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
	server, install = find("mariadbd"), find("mariadb-install-db")
	if server == "" || install == "" {
		return "", "", &MissingBinaryError{Program: "mariadbd and mariadb-install-db", Searched: "PATH, /usr/sbin and /usr/local/sbin",
			Debian: "mariadb-server", Homebrew: "mariadb"}
	}
	return server, install, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// startDatabase starts the replicas' database on port, Postgres or
// MariaDB, and adds it to the proxies' upstreams under its part's name.
func (tb *Testbed) startDatabase(ctx context.Context, port int, upstreams map[string]string) error {
	part, start := herd.Postgres, tb.startPostgres
	if tb.cfg.Replica.DB == api.DBMariaDB {
		part, start = mariadbPart, tb.startMariaDB
	}
	v, err := start(ctx, port)
	if err != nil {
		return tb.partError(part, err)
	}
	tb.status.Versions[part] = v
	upstreams[part] = "127.0.0.1:" + strconv.Itoa(port)
	return nil
}

// dbProblem refuses a database the local testbed cannot run, and what
// it cannot run beside MariaDB.
func (c Config) dbProblem() error {
	switch c.Replica.DB {
	case "", api.DBPostgres:
		return nil
	case api.DBMariaDB:
		if c.Observability {
			return errors.New("observability: its Postgres exporter and dashboards read Postgres (accepted with --db mariadb: no --observability; db.* are in the results, from performance_schema)")
		}
		return nil
	}
	return fmt.Errorf("db: %q (accepted: %s)", c.Replica.DB, strings.Join(api.DBs, ", "))
}

// mariadbSocket is root's way in.
func (tb *Testbed) mariadbSocket() string {
	return filepath.Join(tb.cfg.StateDir, mariadbPart, "mysqld.sock")
}

// startMariaDB initializes MariaDB's data directory, starts mariadbd on
// port and seeds the items as the Postgres testbed's. It returns the
// server's version. As root, mariadbd runs as the mysql user, who owns
// its directory (mariadbd refuses to run as root).
func (tb *Testbed) startMariaDB(ctx context.Context, port int) (string, error) {
	dir := filepath.Join(tb.cfg.StateDir, mariadbPart)
	if err := mkdirEmpty(dir, 0o755); err != nil {
		return "", err
	}
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("mysql")
		if err != nil {
			return "", fmt.Errorf("running as root, and no mysql user to run mariadbd as (mariadb-server creates it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := reachable(dir, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}); err != nil {
			return "", err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", err
		}
		asUser = []string{"--user=mysql"}
	}
	data := filepath.Join(dir, "data")
	install := exec.CommandContext(ctx, tb.bins.mariadbInstall, append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db"}, asUser...)...)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		log := filepath.Join(tb.logDir(), "mariadb-install-db.log")
		_ = os.WriteFile(log, out, 0o644)
		return "", fmt.Errorf("mariadb-install-db: %w: %s (log: %s)", err, lastLine(string(out)), log)
	}
	p, err := tb.spawn(ctx, mariadbPart, syscall.SIGTERM, nil, append([]string{tb.bins.mariadbd, "--no-defaults",
		"--datadir=" + data, "--socket=" + tb.mariadbSocket(), "--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--skip-name-resolve", "--performance-schema=ON",
		"--max-connections=500", "--tmpdir=" + dir, "--pid-file=" + filepath.Join(dir, "mysqld.pid"),
		// the testbed's data is thrown away at down: durability buys nothing
		"--skip-log-bin", "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=0"}, asUser...)...)
	if err != nil {
		return "", err
	}
	socket := tb.mariadbSocket()
	var version string
	p.ready = func(ctx context.Context) error { // a connection of its own: restarts call it again
		root, err := sql.Open("mysql", "root@unix("+socket+")/")
		if err != nil {
			return err
		}
		defer root.Close()
		return root.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version)
	}
	if err := tb.waitReady(ctx, p, p.ready); err != nil {
		return "", err
	}
	root, err := sql.Open("mysql", "root@unix("+socket+")/")
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := seedMariaDB(ctx, root, socket, tb.cfg.Items); err != nil {
		return "", fmt.Errorf("%w (log: %s)", err, p.log)
	}
	tb.status.MariaDB = testbed.MariaDBDSN("root", "unix", tb.mariadbSocket())
	return version, nil
}

// seedMariaDB creates the database, the replicas' user and the items, as
// root on socket.
func seedMariaDB(ctx context.Context, root *sql.DB, socket string, items int) error {
	for _, q := range []string{
		// mariadb-install-db leaves root without a password over TCP too
		// (127.0.0.1 and ::1): root keeps its socket only
		"DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1'",
		"CREATE DATABASE " + testbed.Database,
		fmt.Sprintf("CREATE USER '%s'@'%%'", testbed.AppRole),
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	db, err := sql.Open("mysql", testbed.MariaDBDSN("root", "unix", socket))
	if err != nil {
		return err
	}
	defer db.Close()
	return api.SeedMariaDB(ctx, db, items, testbed.AppRole)
}
