package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/memcached"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// `testbed up --provider docker --cache memcached` on a real engine: the
// replicas cache in the memcached container through toxiproxy, the
// harness reaches it directly, and an expire stampede deletes the hot
// items there at T, reads its figures from Memcached's stats, and sees the
// fleet lock (taken with add) cut the herd; down leaves nothing.
func TestMemcachedOnDocker(t *testing.T) {
	composetest.Require(t)
	st, dir := up(t, "--cache", "memcached")
	localtest.Exclusive(t) // what follows measures; the up does not
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
	mc := &memcached.Client{Address: st.Memcached} // read apart from the run's own
	defer mc.Close()
	read := func(s observe.Source) observe.Sample {
		t.Helper()
		smp, err := s.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return smp
	}
	mc0, redis0 := read(observe.Source{Memcached: mc}), read(observe.Source{Redis: tg.Redis})

	const hot = 20
	results := filepath.Join(t.TempDir(), "results.json")
	herdbench(t, "stampede", "--state-dir", dir, "--results-dir", t.TempDir(), "--json", results, "--arms", "none,lock",
		"--trigger", "expire", "--rate", "400", "--keys", "1000", "--hot-keys", "20", "--seed", "7",
		"--warmup", "300ms", "--before", "1s", "--after", "2s")
	mc1, redis1 := read(observe.Source{Memcached: mc}), read(observe.Source{Redis: tg.Redis})
	rep := readResults(t, results)
	if rep.Partial || len(rep.Arms) != 2 || rep.Environment.Provider != compose.Name {
		t.Fatalf("results: partial %v, %d arms, provider %q; want none and lock complete on docker", rep.Partial, len(rep.Arms), rep.Environment.Provider)
	}
	none, lock := rep.Arms[0], rep.Arms[1]
	t.Logf("db queries after T: none %d, lock %d; cache hits %d and %d, misses %d and %d; Memcached get_hits +%d, get_misses +%d; Redis keyspace hits +%d",
		none.DB.Queries, lock.DB.Queries, none.Cache.Hits, lock.Cache.Hits, none.Cache.Misses, lock.Cache.Misses,
		mc1.Hits-mc0.Hits, mc1.Misses-mc0.Misses, redis1.Hits-redis0.Hits)
	var hits, misses int64
	for _, a := range rep.Arms {
		if d, ok := a.Trigger.Detail.(*triggers.ExpireDetail); !ok || d.Memcached == nil || d.KeysRemoved != hot {
			t.Errorf("%s: expire %#v; want the %d hot items deleted in Memcached", a.Name, a.Trigger.Detail, hot)
		}
		if a.Cache == nil || a.Cache.Hits == 0 || a.Cache.Misses == 0 || a.API.Value("loads") != a.DB.QueriesTotal {
			t.Fatalf("%s: cache %+v, api.loads %d, db.queries_total %d; want hits and misses, and every load one item query",
				a.Name, a.Cache, a.API.Value("loads"), a.DB.QueriesTotal)
		}
		hits, misses = hits+a.Cache.Hits, misses+a.Cache.Misses
	}
	// the arms' cache figures are Memcached's: within what it counted over
	// the run, and more than Redis, which holds only the write queue, saw
	if hits > mc1.Hits-mc0.Hits || misses > mc1.Misses-mc0.Misses || redis1.Hits-redis0.Hits >= hits {
		t.Errorf("cache hits %d, misses %d after T; want within Memcached's get_hits +%d, get_misses +%d, and above Redis' keyspace hits +%d",
			hits, misses, mc1.Hits-mc0.Hits, mc1.Misses-mc0.Misses, redis1.Hits-redis0.Hits)
	}
	if lock.DB.Queries > hot || lock.DB.Queries >= none.DB.Queries {
		t.Errorf("db queries after T: none %d, lock %d; want the lock at most one per hot key (%d) and fewer than none", none.DB.Queries, lock.DB.Queries, hot)
		for _, a := range rep.Arms { // seen once: none's misses with few loads after T; what each row counted
			for _, r := range a.Timeline {
				if r.TMS >= -500 && r.TMS <= 1500 {
					t.Logf("%s t=%dms: db_qps %.0f, hits %d, misses %d, loads %d, p99 %.1fms", a.Name, r.TMS, r.DBQPS, r.Hits, r.Misses, r.Loads, r.P99MS)
				}
			}
		}
	}

	herdbench(t, "testbed", "down", "--state-dir", dir)
	if left := leftovers(t, compose.DefaultProject); len(left) > 0 {
		t.Errorf("after testbed down, docker holds %v of project %s; want nothing, Memcached included", left, compose.DefaultProject)
	}
}
