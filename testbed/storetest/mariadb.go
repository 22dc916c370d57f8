package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/testbed/proctest"
)

// MariaDB is a mariadbd a test started: performance_schema on, grant
// tables in force, root reachable on its Unix socket only.
type MariaDB struct {
	Addr   string // 127.0.0.1:port, for the users a test creates
	Socket string // root's way in
	root   *sql.DB
}

// StartMariaDB initializes a data directory (mariadb-install-db, root by
// its Unix socket), starts mariadbd on a free loopback port with
// performance_schema=ON, and returns once root's connection answers. As
// root, the server runs as the mysql user, who owns the directory.
func StartMariaDB(t testing.TB) *MariaDB {
	t.Helper()
	return StartMariaDBWith(t)
}

// StartMariaDBWith is StartMariaDB with more server options, which come
// after its own, such as --performance-schema=OFF.
func StartMariaDBWith(t testing.TB, options ...string) *MariaDB {
	t.Helper()
	install := require(t, "mariadb-server", "mariadb-install-db")
	server := require(t, "mariadb-server", "mariadbd")
	dir := proctest.WorkDir(t, "mariadb")
	data := filepath.Join(dir, "data")
	var asUser []string
	if os.Geteuid() == 0 { // mariadbd will not run as root: it runs as mysql, who owns dir
		u, err := user.Lookup("mysql")
		if err != nil {
			t.Fatalf("running as root, and no mysql user to run mariadbd as (mariadb-server creates it): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		asUser = []string{"--user=mysql"}
	}
	cmd := exec.Command(install, append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--tmpdir=" + dir}, asUser...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, tail(string(out), 3000))
	}
	addr := proctest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	m := &MariaDB{Addr: addr, Socket: filepath.Join(dir, "mysqld.sock")}
	done := proctest.Start(t, dir, append([]string{server, "--no-defaults", "--datadir=" + data, "--socket=" + m.Socket,
		"--port=" + port, "--bind-address=127.0.0.1", "--skip-name-resolve", "--performance-schema=ON",
		"--skip-log-bin", "--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=0",
		"--max-connections=500", "--log-error=" + filepath.Join(dir, "error.log"),
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--tmpdir=" + dir}, append(asUser, options...)...)...)
	root, err := sql.Open("mysql", "root@unix("+m.Socket+")/")
	if err != nil {
		t.Fatal(err)
	}
	root.SetMaxOpenConns(4)
	t.Cleanup(func() { root.Close() })
	m.root = root
	poll(t, "mariadbd on "+addr, dir, done, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return root.PingContext(ctx)
	})
	return m
}

// Exec runs statements as root, in order; the first that fails fails t.
func (m *MariaDB) Exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := m.root.Exec(s); err != nil {
			t.Fatalf("mariadb: %s: %v", s, err)
		}
	}
}

// Root is root's connection pool, on the Unix socket.
func (m *MariaDB) Root() *sql.DB { return m.root }

// CreateUser creates user (from any host) with password and grants it
// each of grants, such as "ALL ON shop.*".
func (m *MariaDB) CreateUser(t testing.TB, name, password string, grants ...string) {
	t.Helper()
	m.Exec(t, fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", name, password))
	for _, g := range grants {
		m.Exec(t, fmt.Sprintf("GRANT %s TO '%s'@'%%'", g, name))
	}
}

// DSN is the go-sql-driver DSN of user on the server's TCP port.
func (m *MariaDB) DSN(name, password, db string) string {
	return mysql.DSN(name, password, "tcp", m.Addr, db)
}

// ObserverGrants are what herdbench's own user needs of a MySQL target:
// performance_schema to read, PROCESS to see every user's connections and
// transactions, CONNECTION ADMIN to KILL the service user's connections.
var ObserverGrants = []string{"SELECT ON performance_schema.*", "PROCESS, CONNECTION ADMIN ON *.*"}
