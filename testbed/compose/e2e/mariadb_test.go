package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/testbed/subject"
)

// `testbed up --provider docker --db mariadb --cache memcached` on a real
// engine, Memcached and MariaDB together: the replicas read their rows from the
// mariadb container through toxiproxy and cache them in Memcached; the
// harness reads MariaDB's performance_schema as root on the published
// port. An expire stampede's db.queries are MariaDB's digest counts, equal
// to the loads the replicas counted and to what the digest table grew by,
// warm-up included, and the fleet lock cuts the herd; down leaves nothing.
func TestMariaDBOnDocker(t *testing.T) {
	composetest.Require(t)
	st, dir := up(t, "--db", "mariadb", "--cache", "memcached")
	localtest.Exclusive(t) // what follows measures; the up does not
	if st.MariaDB != "root@tcp(127.0.0.1:13306)/herdbench" || st.Postgres != "" || st.Proxies[herd.MariaDB] != (store.MariaDB{}).Compose().Proxy() ||
		st.Proxies[herd.Postgres] != "" || !strings.Contains(st.Versions[herd.MariaDB], "MariaDB") || st.Memcached == "" {
		t.Fatalf("up --db mariadb: mariadb %q, postgres %q, proxies %v, versions %v, memcached %q; want root on 127.0.0.1:13306 behind %s, its version, no Postgres, Memcached",
			st.MariaDB, st.Postgres, st.Proxies, st.Versions, st.Memcached, (store.MariaDB{}).Compose().Proxy())
	}
	tg, err := subject.Open(context.Background(), st, compose.Restarter{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.MySQL == nil || tg.DB != nil || tg.Proxies[herd.Postgres] != herd.MariaDB {
		t.Fatalf("target: mysql %v, postgres %v, proxies %v; want MariaDB observed, and proxied as the database", tg.MySQL, tg.DB, tg.Proxies)
	}
	digest := &mysql.DB{DB: tg.MySQL.DB, User: tg.MySQL.User, Pattern: api.ItemDigestMariaDB} // read apart from the run's own
	calls := func() int64 {
		t.Helper()
		s, err := observe.Source{MySQL: digest}.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s.Calls
	}

	const hot = 20
	before := calls()
	results := filepath.Join(t.TempDir(), "results.json")
	herdbench(t, "stampede", "--state-dir", dir, "--results-dir", t.TempDir(), "--json", results, "--arms", "none,lock",
		"--trigger", "expire", "--rate", "400", "--keys", "1000", "--hot-keys", "20", "--seed", "7",
		"--warmup", "300ms", "--before", "1s", "--after", "2s")
	grew := calls() - before
	rep := readResults(t, results)
	if rep.Partial || len(rep.Arms) != 2 || rep.Environment.Provider != compose.Name {
		t.Fatalf("results: partial %v, %d arms, provider %q; want none and lock complete on docker", rep.Partial, len(rep.Arms), rep.Environment.Provider)
	}
	var counted int64
	for _, a := range rep.Arms {
		t.Logf("arm %s: db.queries %d (total %d, warm %d), api.loads %d, cache hits %d, misses %d, p99 %.1f ms",
			a.Name, a.DB.Queries, a.DB.QueriesTotal, a.Warm.Queries, a.API.Value("loads"), a.Cache.Hits, a.Cache.Misses, a.HTTP.P99MS)
		// every load one item query in the digest table, but for the
		// increments the digest's row may lose (observe.DigestSlack)
		if d := a.API.Value("loads") - a.DB.QueriesTotal; a.API.Value("loads") == 0 || d < 0 || d > observe.DigestSlack(a.API.Value("loads")) {
			t.Errorf("%s: api.loads %d, db.queries_total %d; want every load one item query in MariaDB's digest table (%d short at most)", a.Name, a.API.Value("loads"), a.DB.QueriesTotal, observe.DigestSlack(a.API.Value("loads")))
		}
		// the windows the arm read tile the run: its warm-up and from the
		// load on. The warm-up is about a load a hot key: once in CI the
		// digest grew 110 where 2 x 20 hot keys and the arms' 51 and 20
		// made 111, so two warm-ups made 39 loads (a hot key's warm
		// request answered from the cache)
		counted += a.Warm.Queries + a.DB.QueriesTotal
	}
	if grew != counted {
		t.Errorf("the item query's COUNT_STAR grew %d over the run; the arms counted %d (warm.queries and db.queries_total, both from the digest); want them equal", grew, counted)
	}
	none, lock := rep.Arms[0], rep.Arms[1]
	if lock.DB.Queries > hot || lock.DB.Queries >= none.DB.Queries {
		t.Errorf("db queries after T: none %d, lock %d; want the lock at most one per hot key (%d) and fewer than none", none.DB.Queries, lock.DB.Queries, hot)
	}

	herdbench(t, "testbed", "down", "--state-dir", dir)
	if left := leftovers(t, compose.DefaultProject); len(left) > 0 {
		t.Errorf("after testbed down, docker holds %v of project %s; want nothing, MariaDB included", left, compose.DefaultProject)
	}
}
