package mysql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// shopDB starts a MariaDB with a shop database, its service user shop and
// an observer user hb with what herdbench needs, and returns the server,
// the service's pool and the observer's.
func shopDB(t *testing.T) (*storetest.MariaDB, *sql.DB, *sql.DB) {
	t.Helper()
	m := storetest.StartMariaDB(t)
	m.Exec(t, "CREATE DATABASE shop",
		"CREATE TABLE shop.items (id INT PRIMARY KEY, v VARCHAR(50)) ENGINE=InnoDB",
		"INSERT INTO shop.items VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	m.CreateUser(t, "shop", "shop-pw", "ALL ON shop.*")
	m.CreateUser(t, "hb", "hb-pw", storetest.ObserverGrants...)
	open := func(dsn string) *sql.DB {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	// the service sends its statements as text: MariaDB's digests do not
	// count executions of statements prepared on the server
	return m, open(m.DSN("shop", "shop-pw", "shop") + "?interpolateParams=true"), open(m.DSN("hb", "hb-pw", ""))
}

// countStar reads COUNT_STAR of the statements whose digest text has
// like in it, as root: the source observe.Sample.Calls must agree with.
func countStar(t *testing.T, m *storetest.MariaDB, like string) int64 {
	t.Helper()
	var n int64
	err := m.Root().QueryRow(`SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_statements_summary_by_digest
		WHERE DIGEST_TEXT LIKE ?`, "%"+like+"%").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Calls is the digests' COUNT_STAR delta exactly, by a regular expression
// or by digest, prepared statements and plain ones alike; herdbench's own
// reads never count, even with a pattern that would match them.
func TestMySQLCallsAreTheDigestsCountStar(t *testing.T) {
	m, shop, hb := shopDB(t)
	ctx := context.Background()
	byText := observe.Source{MySQL: &mysql.DB{DB: hb, User: "shop", Pattern: "FROM `items`"}}
	greedy := observe.Source{MySQL: &mysql.DB{DB: hb, User: "shop", Pattern: "SELECT"}}
	read := func(src observe.Source) observe.Sample {
		t.Helper()
		s, err := src.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	root0, s0, g0 := countStar(t, m, "FROM `items`"), read(byText), read(greedy)
	for i := range 7 { // with arguments
		var v string
		if err := shop.QueryRow("SELECT v, SLEEP(0) FROM items WHERE id = ?", 1+i%3).Scan(&v, new(int)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 { // without
		var v string
		if err := shop.QueryRow("SELECT v FROM items WHERE id = 3").Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 { // herdbench's own reads, which the greedy pattern matches
		read(greedy)
	}
	s1, g1, root1 := read(byText), read(greedy), countStar(t, m, "FROM `items`")
	if got, want := s1.Calls-s0.Calls, root1-root0; got != want || want != 10 {
		t.Errorf("Calls grew %d, COUNT_STAR read by root %d; want both 10", got, want)
	}
	if got, want := g1.Calls-g0.Calls, int64(10); got != want {
		t.Errorf("a pattern matching every SELECT grew %d; want the service's 10 SELECTs only, none of herdbench's reads", got)
	}

	var digest string
	if err := m.Root().QueryRow(`SELECT DIGEST FROM performance_schema.events_statements_summary_by_digest
		WHERE DIGEST_TEXT LIKE '%SLEEP%FROM ` + "`items`" + `%'`).Scan(&digest); err != nil {
		t.Fatal(err)
	}
	byDigest := observe.Source{MySQL: &mysql.DB{DB: hb, User: "shop", Digests: []string{digest}}}
	if got, want := read(byDigest).Calls, countStar(t, m, "SLEEP"); got != want || want != 7 {
		t.Errorf("digest %s: Calls = %d, COUNT_STAR %d; want both 7", digest, got, want)
	}
}

// Connections are the service user's, read from performance_schema.users
// as information_schema.PROCESSLIST lists them; ConnectionsOpened counts
// each new one; the server's start stays the same read after read.
func TestMySQLConnectionsAreTheUsers(t *testing.T) {
	m, shop, hb := shopDB(t)
	ctx := context.Background()
	src := observe.Source{MySQL: &mysql.DB{DB: hb, User: "shop", Pattern: "items"}}
	s0, err := src.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*sql.Conn
	for range 3 {
		c, err := shop.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	var listed int64
	if err := m.Root().QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'shop'").Scan(&listed); err != nil {
		t.Fatal(err)
	}
	s1, err := src.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Connections != listed || listed != 3 || s1.ConnectionsOpened-s0.ConnectionsOpened != 3 {
		t.Errorf("Connections = %d, PROCESSLIST %d, opened %d; want 3, 3, 3", s1.Connections, listed, s1.ConnectionsOpened-s0.ConnectionsOpened)
	}
	for _, c := range conns {
		c.Close()
	}
	// the start is of whole seconds: read across two of them
	for first := time.Now(); time.Since(first) < 2100*time.Millisecond; {
		s, err := src.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if observe.DBRestarted(s0, s) {
			t.Fatalf("the server's start moved from %v to %v without a restart", s0.DBStart, s.DBStart)
		}
		time.Sleep(100 * time.Millisecond) // the sampler's own pace; nothing waits on it
	}
}

// LockWaits counts the service user's connection waiting on a row lock
// while it waits, and none once the lock is released; Active counts its
// statement running (the wait) and not the holder's idle transaction.
func TestMySQLLockWaits(t *testing.T) {
	_, shop, hb := shopDB(t)
	ctx := context.Background()
	src := observe.Source{MySQL: &mysql.DB{DB: hb, User: "shop", Pattern: "items"}}
	holder, err := shop.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec("SELECT v FROM items WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := shop.Exec("UPDATE items SET v = 'w' WHERE id = 1")
		waited <- err
	}()
	until := func(what string, ok func(observe.Sample) bool) observe.Sample {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s, err := src.Read(ctx)
			if err == nil && ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: last sample %+v, %v", what, s, err)
			}
			// polling, with the deadline above; InnoDB refreshes
			// INNODB_TRX only when it was last read over 100 ms before
			time.Sleep(150 * time.Millisecond)
		}
	}
	s := until("the update's lock wait never showed", func(s observe.Sample) bool { return s.LockWaits == 1 })
	if s.LocksWaiting < 1 || s.Active != 1 {
		t.Errorf("LocksWaiting = %d, Active = %d while shop waits; want at least its 1, and its one statement running (the holder's is done)", s.LocksWaiting, s.Active)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the waiting update: %v", err)
	}
	until("the lock wait, or the statement, outlived the lock", func(s observe.Sample) bool { return s.LockWaits == 0 && s.LocksWaiting == 0 && s.Active == 0 })
}
