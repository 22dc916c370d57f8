package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/memcached"
	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// `testbed up --provider docker --db mariadb --cache memcached` on a real
// engine, Memcached and MariaDB together, each behind toxiproxy: the
// replicas read their rows from the mariadb container and cache them in
// the memcached container; the harness reads MariaDB's performance_schema
// as root on the published port and Memcached directly. One expire
// stampede checks both stores' figures against the servers' own: its
// db.queries are MariaDB's digest counts, equal to the loads the replicas
// counted and to what the digest table grew by, warm-up included; its
// cache figures are Memcached's stats, where expire deleted the hot items
// at T; the fleet lock (taken with add) cuts the herd; down leaves
// nothing. (Memcached beside Postgres on docker was a test of its own,
// with the same stampede: the Postgres side is TestDockerTestbed's.)
func TestMariaDBAndMemcachedOnDocker(t *testing.T) {
	composetest.Require(t)
	st, dir := up(t, "--db", "mariadb", "--cache", "memcached")
	localtest.Exclusive(t) // what follows measures; the up does not
	if st.MariaDB != "root@tcp(127.0.0.1:13306)/herdbench" || st.Postgres != "" || st.Proxies[herd.MariaDB] != (store.MariaDB{}).Compose().Proxy() ||
		st.Proxies[herd.Postgres] != "" || !strings.Contains(st.Versions[herd.MariaDB], "MariaDB") {
		t.Fatalf("up --db mariadb: mariadb %q, postgres %q, proxies %v, versions %v; want root on 127.0.0.1:13306 behind %s, its version, no Postgres",
			st.MariaDB, st.Postgres, st.Proxies, st.Versions, (store.MariaDB{}).Compose().Proxy())
	}
	if st.Memcached != "127.0.0.1:21211" || st.Proxies[replica.CacheMemcached] != (store.Memcached{}).Compose().Proxy() ||
		st.Versions[replica.CacheMemcached] == "" || st.Redis != "redis://127.0.0.1:16379" {
		t.Fatalf("up --cache memcached: memcached %q, proxies %v, versions %v, redis %q; want 127.0.0.1:21211 behind %s, its version, and Redis beside it",
			st.Memcached, st.Proxies, st.Versions, st.Redis, (store.Memcached{}).Compose().Proxy())
	}
	tg, err := subject.Open(context.Background(), st, compose.Restarter{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.MySQL == nil || tg.DB != nil || tg.Proxies[herd.Postgres] != herd.MariaDB {
		t.Fatalf("target: mysql %v, postgres %v, proxies %v; want MariaDB observed, and proxied as the database", tg.MySQL, tg.DB, tg.Proxies)
	}
	// read apart from the run's own
	digest := &mysql.DB{DB: tg.MySQL.DB, User: tg.MySQL.User, Pattern: api.ItemDigestMariaDB}
	mc := &memcached.Client{Address: st.Memcached}
	defer mc.Close()
	read := func(s observe.Source) observe.Sample {
		t.Helper()
		smp, err := s.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return smp
	}

	const hot = 20
	before, mc0, redis0 := read(observe.Source{MySQL: digest}), read(observe.Source{Memcached: mc}), read(observe.Source{Redis: tg.Redis})
	results := filepath.Join(t.TempDir(), "results.json")
	herdbench(t, "stampede", "--state-dir", dir, "--results-dir", t.TempDir(), "--json", results, "--arms", "none,lock",
		"--trigger", "expire", "--rate", "400", "--keys", "1000", "--hot-keys", "20", "--seed", "7",
		"--warmup", "300ms", "--before", "1s", "--after", "2s")
	after, mc1, redis1 := read(observe.Source{MySQL: digest}), read(observe.Source{Memcached: mc}), read(observe.Source{Redis: tg.Redis})
	rep := readResults(t, results)
	if rep.Partial || len(rep.Arms) != 2 || rep.Environment.Provider != compose.Name {
		t.Fatalf("results: partial %v, %d arms, provider %q; want none and lock complete on docker", rep.Partial, len(rep.Arms), rep.Environment.Provider)
	}
	var counted, hits, misses int64
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
		if d, ok := a.Trigger.Detail.(*triggers.ExpireDetail); !ok || d.Memcached == nil || d.KeysRemoved != hot {
			t.Errorf("%s: expire %#v; want the %d hot items deleted in Memcached", a.Name, a.Trigger.Detail, hot)
		}
		if a.Cache == nil || a.Cache.Hits == 0 || a.Cache.Misses == 0 {
			t.Fatalf("%s: cache %+v; want hits and misses", a.Name, a.Cache)
		}
		hits, misses = hits+a.Cache.Hits, misses+a.Cache.Misses
	}
	if grew := after.Calls - before.Calls; grew != counted {
		t.Errorf("the item query's COUNT_STAR grew %d over the run; the arms counted %d (warm.queries and db.queries_total, both from the digest); want them equal", grew, counted)
	}
	// the arms' cache figures are Memcached's: within what it counted over
	// the run, and more than Redis, which holds only the write queue, saw
	if hits > mc1.Hits-mc0.Hits || misses > mc1.Misses-mc0.Misses || redis1.Hits-redis0.Hits >= hits {
		t.Errorf("cache hits %d, misses %d after T; want within Memcached's get_hits +%d, get_misses +%d, and above Redis' keyspace hits +%d",
			hits, misses, mc1.Hits-mc0.Hits, mc1.Misses-mc0.Misses, redis1.Hits-redis0.Hits)
	}
	none, lock := rep.Arms[0], rep.Arms[1]
	if lock.DB.Queries > hot || lock.DB.Queries >= none.DB.Queries {
		t.Errorf("db queries after T: none %d, lock %d; want the lock at most one per hot key (%d) and fewer than none", none.DB.Queries, lock.DB.Queries, hot)
		for _, a := range rep.Arms { // seen once: none's misses with few loads after T; what each row counted
			for _, r := range a.Timeline {
				if r.TMS >= -500 && r.TMS <= 1500 {
					t.Logf("%s t=%dms: db_qps %.0f, hits %d, misses %d, loads %d, p99 %.1fms", a.Name, r.TMS, r.DBQPS, r.Hits, r.Misses, r.Counts["loads"], r.P99MS)
				}
			}
		}
	}

	herdbench(t, "testbed", "down", "--state-dir", dir)
	if left := leftovers(t, compose.DefaultProject); len(left) > 0 {
		t.Errorf("after testbed down, docker holds %v of project %s; want nothing, MariaDB and Memcached included", left, compose.DefaultProject)
	}
}
