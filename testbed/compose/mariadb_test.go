package compose

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// The docker provider takes --db mariadb and refuses what it cannot run:
// a database it has no service for, and the observability profile beside
// MariaDB (its exporter and dashboards read Postgres), each naming the
// field and what is accepted.
func TestProblemsOfTheDatabase(t *testing.T) {
	for _, tc := range []struct {
		name  string
		db    string
		set   []string
		obs   bool
		field string // "" for none
		says  string
	}{
		{"mariadb", replica.DBMariaDB, []string{"db"}, false, "", ""},
		{"postgres", replica.DBPostgres, []string{"db"}, false, "", ""},
		{"mariadb with memcached", replica.DBMariaDB, []string{"db", "cache"}, false, "", ""},
		{"unknown", "oracle", []string{"db"}, false, "db", "accepted: postgres, mariadb"},
		{"mariadb with observability", replica.DBMariaDB, []string{"db", "observability"}, true, "observability", "no --observability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := replica.DefaultOptions
			o.DB = tc.db
			if slices.Contains(tc.set, "cache") {
				o.Cache = replica.CacheMemcached
			}
			bad := (Provider{}).Problems(testbed.Options{Set: tc.set, Replica: o, Observability: tc.obs})
			switch {
			case tc.field == "" && len(bad) > 0:
				t.Errorf("Problems(--db %s %v) = %v; want none", tc.db, tc.set, bad)
			case tc.field != "" && (len(bad) != 1 || bad[0].Field != tc.field || !strings.Contains(bad[0].Error(), tc.says)):
				t.Errorf("Problems(--db %s %v) = %v; want one on %s saying %q", tc.db, tc.set, bad, tc.field, tc.says)
			}
		})
	}
}

// up --db mariadb starts the mariadb profile with the replicas' database in
// the environment compose reads, and describes MariaDB as the local
// provider does: root's DSN on the published port, its proxy as the
// database's, no Postgres; restart names it; down runs in the same
// profile.
func TestUpWithMariaDBUsesTheProfile(t *testing.T) {
	f := newFakeDocker(t, append(slices.Clone(core), "mariadb"))
	dir := t.TempDir()
	st, err := Up(context.Background(), Config{StateDir: dir, File: f.file, DB: replica.DBMariaDB})
	if err != nil {
		t.Fatal(err)
	}
	env := "HERDBENCH_DB=mariadb HERDBENCH_DB_FLAG=--mysql HERDBENCH_DB_DSN=" + testbed.AppRole + "@tcp(" + (store.MariaDB{}).Compose().Proxy() + ")/herdbench "
	want := env + "docker compose -f FILE -p herdbench --profile mariadb up -d --build --remove-orphans"
	if calls := f.calls(t); !slices.Contains(calls, want) {
		t.Errorf("calls =\n%s\nwant among them\n%s", strings.Join(calls, "\n"), want)
	}
	if st.MariaDB != "root@tcp(127.0.0.1:13306)/herdbench" || st.Postgres != "" || st.Proxies[herd.MariaDB] != (store.MariaDB{}).Compose().Proxy() ||
		st.Proxies[herd.Postgres] != "" || st.Proxies["redis"] != Proxies["redis"] || Proxies[herd.Postgres] == "" {
		t.Errorf("status mariadb %q, postgres %q, proxies %v; want root@tcp(127.0.0.1:13306)/herdbench, no postgres, "+
			"the mariadb proxy in place of postgres's (the package's map untouched)", st.MariaDB, st.Postgres, st.Proxies)
	}
	// a restart of the database's part restarts MariaDB; Postgres, idle, is refused
	f.reset(t)
	if got, err := Restart(context.Background(), dir, herd.MariaDB, false); err != nil || !slices.Equal(got, []string{"mariadb"}) ||
		!slices.Contains(f.calls(t), env+"docker compose -f FILE -p herdbench --profile mariadb restart mariadb") {
		t.Errorf("Restart(mariadb) = %v, %v, calls %q; want the mariadb service restarted", got, err, f.calls(t))
	}
	if _, err := Restart(context.Background(), dir, herd.Postgres, false); err == nil || !strings.Contains(err.Error(), "accepted: mariadb") {
		t.Errorf("Restart(postgres) on MariaDB = %v; want it refused, naming mariadb", err)
	}
	f.reset(t)
	if err := Down(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if calls, want := f.calls(t), env+"docker compose -f FILE -p herdbench --profile mariadb down -v --remove-orphans"; !slices.Equal(calls, []string{want}) {
		t.Errorf("Down calls = %q; want %q", calls, want)
	}
}

// With the environment up gives the mariadb profile, the replicas use
// MariaDB through its toxiproxy proxy, with --mysql and no --postgres
// (testbed serve refuses --postgres beside --db mariadb); without it,
// Postgres as always.
func TestReplicasUseMariaDBWithItsProfile(t *testing.T) {
	for _, kv := range (store.MariaDB{}).Compose().Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	p := load(t, (store.MariaDB{}).Compose().Profile)
	for _, r := range []string{"api-1", "api-2", "api-3"} {
		flags := serveFlags(t, p, r)
		_, pg := flags["--postgres"]
		if flags["--db"] != replica.DBMariaDB || flags["--mysql"] != testbed.AppRole+"@tcp("+(store.MariaDB{}).Compose().Proxy()+")/"+testbed.Database || pg {
			t.Errorf("%s: flags %v; want --db mariadb, --mysql %s@tcp(%s)/%s and no --postgres", r, flags, testbed.AppRole, (store.MariaDB{}).Compose().Proxy(), testbed.Database)
		}
	}
	if env := (store.Postgres{}).Compose().Env; env != nil {
		t.Errorf("Postgres' compose env = %q; want none: the compose file's default is Postgres", env)
	}
}

// The MariaDB init script creates the replicas' user at '%' and seeds what
// api.SeedStatementsMariaDB seeds for Items items, and runs on a real
// MariaDB as the image runs it: the mariadb client, as root, in the
// database.
func TestMariaDBInitScriptSeedsAsTheLocalProvider(t *testing.T) {
	script := readFile(t, "initdb-mariadb/10-herdbench.sql")
	at := 0
	for _, stmt := range append([]string{"CREATE USER IF NOT EXISTS '" + testbed.AppRole + "'@'%'"},
		api.SeedStatementsMariaDB(Items, testbed.AppRole)...) {
		i := strings.Index(script[at:], stmt+";\n")
		if i < 0 {
			t.Fatalf("initdb-mariadb/10-herdbench.sql lacks, after offset %d, the statement %q", at, stmt)
		}
		at += i + len(stmt)
	}

	m := storetest.StartMariaDB(t)
	m.Exec(t, "CREATE DATABASE compose_init")
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Fatalf("the mariadb client (Debian: mariadb-client, beside mariadb-server): %v", err)
	}
	in, err := os.Open("initdb-mariadb/10-herdbench.sql")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(client, "--no-defaults", "--socket="+m.Socket, "-uroot", "compose_init")
	cmd.Stdin = in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("running initdb-mariadb/10-herdbench.sql: %v\n%s", err, out)
	}
	app, err := sql.Open("mysql", m.DSN(testbed.AppRole, "", "compose_init"))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	var n int
	if err := app.QueryRow("SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != Items {
		t.Errorf("items the app user reads over TCP after the init script = %d, %v; want Items, %d", n, err, Items)
	}
}
