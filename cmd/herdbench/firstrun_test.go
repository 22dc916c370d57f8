package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	_ "github.com/go-sql-driver/mysql"

	"github.com/herdbench/herdbench/testbed/storetest"
)

// wikiService is a service on Memcached and MariaDB as a wiki runs one:
// GET /index.php?title=Page_N reads page:N from Memcached and, on a miss,
// selects the page (a 20 ms statement) and sets the item for 300 s; a
// title it does not have answers 404, after its statement.
func wikiService(t *testing.T, mcAddr, dsn string) string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(100)
	db.SetMaxIdleConns(100)
	t.Cleanup(func() { db.Close() })
	mc := memcache.New(mcAddr)
	mc.MaxIdleConns, mc.Timeout = 100, 2*time.Second
	t.Cleanup(func() { mc.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		title, ok := strings.CutPrefix(r.URL.Query().Get("title"), "Page_")
		if r.URL.Path != "/index.php" || !ok {
			http.NotFound(w, r)
			return
		}
		if it, err := mc.Get("page:" + title); err == nil {
			w.Write(it.Value)
			return
		}
		var body string
		switch err := db.QueryRowContext(r.Context(), "SELECT body FROM article WHERE title = ? AND SLEEP(0.02) = 0", title).Scan(&body); {
		case errors.Is(err, sql.ErrNoRows):
			http.NotFound(w, r)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = mc.Set(&memcache.Item{Key: "page:" + title, Value: []byte(body), Expiration: 300})
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// pageCalls is COUNT_STAR of the wiki's page statement, read by root.
func pageCalls(t *testing.T, m *storetest.MariaDB) int64 {
	t.Helper()
	var n int64
	if err := m.Root().QueryRow(`SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_statements_summary_by_digest
		WHERE DIGEST_TEXT LIKE '%FROM ` + "`article`" + `%SLEEP%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A first run against a service on Memcached and MariaDB, as a new user
// makes it: init's file with its placeholders passes the dry run and
// stops the run before T, naming each placeholder that read nothing
// (exit 2); init told the service's user, statements and cache key, with
// keys probed from the service, runs as written but for the DSN, and its
// db.queries equal MariaDB's own count of the statement.
func TestFirstRunOnMemcachedAndMariaDB(t *testing.T) {
	m := storetest.StartMariaDB(t)
	mcAddr := storetest.Memcached(t)
	// not page: MariaDB's digest writes PAGE and BODY as keywords, unquoted,
	// so a filter of FROM `page` matched nothing, and the run refused it
	m.Exec(t, "CREATE DATABASE wiki", "CREATE TABLE wiki.article (title VARCHAR(50) PRIMARY KEY, body TEXT)")
	for i := 1; i <= 30; i++ {
		m.Exec(t, fmt.Sprintf("INSERT INTO wiki.article VALUES ('%d', 'page %d')", i, i))
	}
	m.CreateUser(t, "wiki", "wiki-pw", "ALL ON wiki.*")
	m.CreateUser(t, "hb", "hb-pw", storetest.ObserverGrants...)
	base := wikiService(t, mcAddr, m.DSN("wiki", "wiki-pw", "wiki")+"?interpolateParams=true")
	env := []string{"SERVICE_MYSQL_DSN=" + m.DSN("hb", "hb-pw", "")}
	dir := t.TempDir()
	common := []string{"init", "--url", base + "/index.php?title=Page_{key}", "--memcached", mcAddr, "--mysql", m.Addr, "--probe"}
	short := []string{"--rate", "50", "--warmup", "1s", "--before", "2s", "--after", "3s"}

	placeholders := filepath.Join(dir, "first.yaml")
	if code, stdout, stderr := herdbench(t, append(common, "--file", placeholders)...); code != exitOK {
		t.Fatalf("init = exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", placeholders, "--dry-run"); code != exitOK || !strings.Contains(stdout, "request   GET /index.php?title=Page_{key}\n") {
		t.Fatalf("the dry run of init's file = exit %d; want its request with the whole query template\n%s%s", code, stdout, stderr)
	}
	before := pageCalls(t, m)
	code, stdout, stderr := herdbenchEnv(t, env, append([]string{"stampede", "--target", placeholders, "--results-dir", dir}, short...)...)
	for _, want := range []string{`memcached.key: read nothing: "item:{key}": none of the 30 hot keys' items`,
		`mysql.user: read nothing: "app" never connected`, `mysql.statements: read nothing: "FROM items" matched no statement`} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("the run of init's placeholders = exit %d; want 2 and %q\n%s%s", code, want, stdout, stderr)
		}
	}
	if strings.Contains(stdout+stderr, "after T") || pageCalls(t, m)-before > 30 {
		t.Errorf("the refused run went on past the fill: %d statements\n%s%s", pageCalls(t, m)-before, stdout, stderr)
	}

	told := filepath.Join(dir, "told.yaml")
	args := append(common, "--file", told, "--db-user", "wiki", "--statements", "FROM `article`", "--cache-key", "page:{key}")
	if code, stdout, stderr := herdbench(t, args...); code != exitOK || !strings.Contains(stdout, "the 30 of 100 keys of 1 to 100 that answered 2xx") {
		t.Fatalf("init told the service's names = exit %d\n%s%s", code, stdout, stderr)
	}
	before = pageCalls(t, m)
	code, stdout, stderr = herdbenchEnv(t, env, append([]string{"stampede", "--target", told, "--results-dir", dir, "-o", "json=" + filepath.Join(dir, "r.json")}, short...)...)
	after := pageCalls(t, m)
	if code != exitOK {
		t.Fatalf("the run of init's file = exit %d\n%s%s", code, stdout, stderr)
	}
	if header := "trigger   expire at T: delete 30 Memcached items (the hot keys): page:1, page:2"; !strings.Contains(stdout, header) {
		t.Errorf("the run's header lacks %q: what the trigger does to this target's Memcached\n%s", header, stdout)
	}
	var rep struct {
		Arms []struct {
			Warm struct{ Queries int64 } `json:"warm"`
			DB   struct {
				Queries         int64  `json:"queries"`
				QueriesTotal    int64  `json:"queries_total"`
				AboveBaselineMS *int64 `json:"above_baseline_ms"`
			} `json:"db"`
		} `json:"arms"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil || len(rep.Arms) != 1 {
		t.Fatalf("results: %v, %d arms", err, len(rep.Arms))
	}
	a := rep.Arms[0]
	t.Logf("db.queries %d (total %d, warm %d); MariaDB counted %d", a.DB.Queries, a.DB.QueriesTotal, a.Warm.Queries, after-before)
	// the hot pages the load asked for again in the 3 s after T, at 50
	// requests a second: all 30 on a quiet machine, once 29 on a busy one
	if a.DB.Queries < 20 || a.Warm.Queries+a.DB.QueriesTotal != after-before {
		t.Errorf("db.queries %d, warm %d + total %d; MariaDB counted %d: want most of the 30 hot pages reloaded after T (20 or more), and the counts equal",
			a.DB.Queries, a.Warm.Queries, a.DB.QueriesTotal, after-before)
	}
	// the table says how long MariaDB worked above its baseline, as the results do
	if ms := a.DB.AboveBaselineMS; ms == nil || !strings.Contains(stdout, "db work   above its baseline's db q/s from T: ") {
		t.Errorf("db.above_baseline_ms %v; want it in the results and a db work line in the table\n%s", ms, stdout)
	} else {
		t.Logf("db.above_baseline_ms %d", *ms)
	}
	herdWithoutAKey(t, env, told)
}

// herdWithoutAKey dry-runs docs/targets.md's ways to herd a service whose
// cache keys are not the request's key, each on told: without its
// memcached.key, flush_all or a command; requests by the id.
func herdWithoutAKey(t *testing.T, env []string, told string) {
	t.Helper()
	b, err := os.ReadFile(told)
	if err != nil {
		t.Fatal(err)
	}
	keyless := regexp.MustCompile(`(?m)^  key: .*\n`).ReplaceAllString(string(b), "")
	for _, tt := range []struct{ name, from, to, want string }{
		{"flush", "allow_flush_all: false\n", "allow_flush_all: true\ntrigger: {name: flush}\n",
			"trigger   flush at T: flush_all on the Memcached (every item of it)\n"},
		{"command", "allow_flush_all: false\n", "allow_flush_all: false\ntrigger: {name: command, run: ./purge-hot-pages.sh}\n",
			"./purge-hot-pages.sh"},
		{"by id", "  path: \"/index.php\"\n  query:\n    \"title\": \"Page_{key}\"\n", "  path: /index.php\n  query: {curid: \"{key}\"}\n",
			"request   GET /index.php?curid={key}\n"},
	} {
		src := keyless
		if tt.name == "by id" { // the id is the request's key: key names the items again
			src = string(b)
		} else {
			src = regexp.MustCompile(`(?m)^trigger:\n  name: expire\n`).ReplaceAllString(src, "")
		}
		y := strings.Replace(src, tt.from, tt.to, 1)
		f := filepath.Join(t.TempDir(), "keyless.yaml")
		if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", f, "--dry-run"); code != exitOK || y == src || !strings.Contains(stdout, tt.want) {
			t.Errorf("%s: the dry run of a file without memcached.key = exit %d; want %q\n%s\n%s%s", tt.name, code, tt.want, y, stdout, stderr)
		}
	}
}
