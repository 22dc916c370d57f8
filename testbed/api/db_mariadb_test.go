package api

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// mariaReplica is a replica on a real MariaDB, seeded with items items
// (SeedMariaDB, as root), and a real Redis, with opts over the defaults;
// it returns the replica's client, the server and root's pool on the
// seeded database.
type mariaReplica struct {
	c     *admin.Client
	m     *storetest.MariaDB
	owner *sql.DB // root, on the herdbench database
	redis string
}

func startMariaReplica(t *testing.T, items int, tune func(*replica.Options)) mariaReplica {
	t.Helper()
	m := storetest.StartMariaDB(t)
	m.Exec(t, "CREATE DATABASE herdbench")
	m.CreateUser(t, "app", "app-pw") // SeedMariaDB grants what it needs
	owner, err := sql.Open("mysql", "root@unix("+m.Socket+")/herdbench")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Close() })
	if err := SeedMariaDB(context.Background(), owner, items, "app"); err != nil {
		t.Fatal(err)
	}
	r := mariaReplica{m: m, owner: owner,
		redis: startServer(t, "redis-server", "--port", "PORT", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")}
	opts := replica.DefaultOptions
	opts.DB, opts.MySQLDSN, opts.RedisAddr = replica.DBMariaDB, m.DSN("app", "app-pw", "herdbench"), r.redis
	opts.DBPoolSize = 4
	if tune != nil {
		tune(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New on MariaDB: %v", err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	r.c = admin.NewClient(srv.URL)
	return r
}

// digestCalls is the COUNT_STAR of the digests whose text matches re, as
// observe.MySQL selects them, read as root.
func (r mariaReplica) digestCalls(t *testing.T, re string) int64 {
	t.Helper()
	var n int64
	err := r.m.Root().QueryRow(`SELECT CAST(COALESCE(SUM(COUNT_STAR), 0) AS SIGNED) FROM performance_schema.events_statements_summary_by_digest
		WHERE DIGEST_TEXT REGEXP ?`, re).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// digestRise polls, for up to 10 s, the rise of digestCalls(re) over base
// until it reaches want, and returns the last rise: the server adds a
// statement to its digest once the statement ends, which can come after
// the client has its answer, and a canceled SLEEP ends later still.
func (r mariaReplica) digestRise(t *testing.T, re string, base, want int64) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := r.digestCalls(t, re) - base
		if d >= want || time.Now().After(deadline) {
			return d
		}
		time.Sleep(20 * time.Millisecond) // polling the digest, with the deadline above
	}
}

func (r mariaReplica) counters(t *testing.T) admin.Counters {
	t.Helper()
	cs, err := r.c.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// get requests item id and returns its status and X-Cache.
func (r mariaReplica) get(t *testing.T, id int64, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/items/%d", r.c.URL, id), nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Cache")
}

// The seed gives every item Postgres's row: payload repeat(md5(id), 8).
func TestSeedMariaDBRowsAreSeeds(t *testing.T) {
	r := startMariaReplica(t, 1500, nil)
	var n, likes int64
	var payload string
	if err := r.owner.QueryRow(`SELECT (SELECT COUNT(*) FROM items), (SELECT COUNT(*) FROM likes WHERE n = 0 AND followers = 0), (SELECT payload FROM items WHERE id = 1234)`).Scan(&n, &likes, &payload); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte("1234"))
	if want := strings.Repeat(hex.EncodeToString(sum[:]), 8); n != 1500 || likes != 1500 || payload != want {
		t.Errorf("seeded 1500: items %d, zero likes rows %d, payload of 1234 %q; want 1500, 1500, %q", n, likes, payload, want)
	}
	if err := SeedMariaDB(context.Background(), r.owner, 10, "app"); err != nil {
		t.Errorf("a second seed: %v; want it to recreate the tables", err)
	}
}

// An item loads once, through the item query whose SLEEP holds a pooled
// connection for the query cost, and is then a hit; MariaDB's digest of
// the item query counts exactly the loads the replica counted, the fill's
// exactly its queries.
func TestMariaDBReadPath(t *testing.T) {
	r := startMariaReplica(t, 3000, func(o *replica.Options) { o.Config.QueryCost = herd.Duration(600 * time.Millisecond) })
	item0, fill0 := r.digestCalls(t, ItemDigestMariaDB), r.digestCalls(t, FillDigestMariaDB)

	held := make(chan string, 1)
	go func() { held <- r.heldBySleep("0.6") }()
	start := time.Now()
	if code, how := r.get(t, 7); code != 200 || how != admin.OutcomeMiss {
		t.Fatalf("first GET /items/7 = %d %s; want 200 miss", code, how)
	}
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("a miss took %s; want at least the query cost, 600ms", took)
	}
	if state := <-held; state != "" {
		t.Error(state)
	}
	if code, how := r.get(t, 7); code != 200 || how != admin.OutcomeHit {
		t.Errorf("second GET /items/7 = %d %s; want 200 hit", code, how)
	}
	if code, _ := r.get(t, 99999); code != 404 {
		t.Errorf("GET /items/99999 = %d; want 404", code)
	}
	res, err := r.c.Fill(context.Background(), 1, 2500)
	if err != nil || res.Filled != 2500 || res.Queries != 3 {
		t.Fatalf("fill 1..2500 = %+v, %v; want 2500 items in 3 queries", res, err)
	}
	if code, how := r.get(t, 2000); code != 200 || how != admin.OutcomeHit {
		t.Errorf("GET /items/2000 after the fill = %d %s; want 200 hit", code, how)
	}
	cs := r.counters(t)
	if cs.Loads != 2 || cs.LoadErrors != 0 {
		t.Errorf("loads %d, load errors %d; want 2 (item 7, and 99999 not found), 0", cs.Loads, cs.LoadErrors)
	}
	if d := r.digestRise(t, ItemDigestMariaDB, item0, cs.Loads); d != cs.Loads {
		t.Errorf("COUNT_STAR of the item digest rose by %d; want the replica's loads, %d", d, cs.Loads)
	}
	if d := r.digestRise(t, FillDigestMariaDB, fill0, int64(res.Queries)); d != int64(res.Queries) {
		t.Errorf("COUNT_STAR of the fill digest rose by %d; want the fill's queries, %d", d, res.Queries)
	}
	if cs.DBNewConns < 1 || cs.DBNewConns > 4 || cs.DBCanceledAcquires != 0 {
		t.Errorf("pool: %d new connections, %d canceled acquires; want 1 to 4 (db-pool), 0", cs.DBNewConns, cs.DBCanceledAcquires)
	}
}

// heldBySleep waits, for up to 10 s, for a connection of the app user in
// SLEEP(secs) running the item query, and says what is wrong if none
// comes.
func (r mariaReplica) heldBySleep(secs string) string {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := r.m.Root().QueryRow(`SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'app' AND STATE = 'User sleep' AND INFO LIKE ?`, "SELECT i.id%SLEEP("+secs+")%").Scan(&n)
		if err != nil {
			return err.Error()
		}
		if n == 1 {
			return ""
		}
		time.Sleep(5 * time.Millisecond) // polling the process list, with the deadline above
	}
	return "no connection of app sat in SLEEP(" + secs + ") running the item query within 10s"
}

// The pool's counters on MariaDB: a load whose deadline passes while it
// waits for the only connection is a canceled acquire that sends nothing;
// a load canceled mid-query costs its connection, and the next load opens
// one. MariaDB runs the canceled statement to its end (the driver closes
// the connection; the server notices once SLEEP returns), so its digest
// counts it: the replica's loads plus that one.
func TestMariaDBPoolCounters(t *testing.T) {
	r := startMariaReplica(t, 10, func(o *replica.Options) {
		o.DBPoolSize = 1
		o.Config.QueryCost = herd.Duration(2 * time.Second)
	})
	item0 := r.digestCalls(t, ItemDigestMariaDB)
	a := make(chan int, 1)
	go func() { code, _ := r.get(t, 1); a <- code }()
	if state := r.heldBySleep("2"); state != "" {
		t.Fatal(state)
	}
	if code, _ := r.get(t, 2, admin.DeadlineHeader, "300"); code != http.StatusGatewayTimeout {
		t.Errorf("GET /items/2 with a 300ms deadline while item 1 holds the only connection = %d; want 504", code)
	}
	if code := <-a; code != 200 {
		t.Fatalf("GET /items/1 = %d; want 200", code)
	}
	cs := r.counters(t)
	if cs.DBCanceledAcquires != 1 || cs.DBNewConns != 1 || cs.Loads != 1 {
		t.Errorf("after a wait that outlived its deadline: canceled acquires %d, new connections %d, loads %d; want 1, 1, 1", cs.DBCanceledAcquires, cs.DBNewConns, cs.Loads)
	}
	go func() { code, _ := r.get(t, 3, admin.DeadlineHeader, "1000"); a <- code }()
	if state := r.heldBySleep("2"); state != "" {
		t.Fatal("item 3's query: " + state)
	}
	if code := <-a; code != http.StatusGatewayTimeout {
		t.Errorf("GET /items/3 with a 1s deadline on a 2s query = %d; want 504", code)
	}
	if code, how := r.get(t, 4); code != 200 || how != admin.OutcomeMiss {
		t.Errorf("GET /items/4 = %d %s; want 200 miss", code, how)
	}
	cs = r.counters(t)
	if cs.DBNewConns != 2 || cs.Loads != 2 || cs.LoadErrors != 2 {
		t.Errorf("after a query canceled mid-flight: new connections %d, loads %d, load errors %d; want 2, 2, 2", cs.DBNewConns, cs.Loads, cs.LoadErrors)
	}
	if d := r.digestRise(t, ItemDigestMariaDB, item0, cs.Loads+1); d != cs.Loads+1 {
		t.Errorf("COUNT_STAR of the item digest rose by %d; want the loads, %d, and the canceled query MariaDB ran to its end", d, cs.Loads)
	}
}

// Options refuse a database that is not one, a MySQL DSN without
// MariaDB or one the driver cannot read, and MariaDB without its DSN
// once the replica's addresses are given, each naming the field and what
// it accepts; New refuses MariaDB without a DSN whatever else is given.
func TestDBOptionsProblems(t *testing.T) {
	dsn := "app:pw@tcp(127.0.0.1:3306)/herdbench"
	for _, tt := range []struct {
		name string
		tune func(*replica.Options)
		want string // "" for none
	}{
		{"postgres, the default", func(o *replica.Options) { o.DB = "" }, ""},
		{"mariadb with its dsn", func(o *replica.Options) { o.DB, o.MySQLDSN = replica.DBMariaDB, dsn }, ""},
		{"mariadb, no address yet", func(o *replica.Options) { o.DB, o.RedisAddr = replica.DBMariaDB, "" }, ""},
		{"unknown", func(o *replica.Options) { o.DB = "oracle" }, `db: "oracle" is not a database (accepted: postgres, mariadb)`},
		{"dsn without mariadb", func(o *replica.Options) { o.MySQLDSN = dsn }, "mysql: a MySQL DSN is for db mariadb, and the db is postgres"},
		{"mariadb without dsn", func(o *replica.Options) { o.DB = replica.DBMariaDB }, "mysql: empty, and db mariadb needs the app user's DSN (accepted: a go-sql-driver DSN"},
		{"bad dsn", func(o *replica.Options) { o.DB, o.MySQLDSN = replica.DBMariaDB, "app@127.0.0.1/x" }, "mysql: default addr for network '127.0.0.1' unknown (accepted: a go-sql-driver DSN"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := replica.DefaultOptions
			o.RedisAddr = "127.0.0.1:1"
			tt.tune(&o)
			got := Problems(o).Err()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("Problems(o) = %v; want none", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("Problems(o) = %v; want %s", got, tt.want)
			}
		})
	}
	o := replica.DefaultOptions
	o.DB, o.MySQLDSN, o.DBPoolSize, o.Config.TTL = replica.DBMariaDB, "app@127.0.0.1/x", 0, 0
	var fields []string
	for _, e := range Problems(o) {
		fields = append(fields, e.Field)
	}
	if want := []string{"db_pool", "mysql", "ttl"}; !slices.Equal(fields, want) {
		t.Errorf("Problems(o) name %v; want %v: the DSN's at the database's place", fields, want)
	}
	o = replica.DefaultOptions
	o.DB = replica.DBMariaDB
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "mysql: empty") {
		t.Errorf("New(mariadb, no DSN) = %v; want an error naming mysql", err)
	}
}
