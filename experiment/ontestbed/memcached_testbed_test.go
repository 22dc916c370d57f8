package ontestbed_test

import (
	"context"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/memcached"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// The stampede on a testbed whose replicas keep their items in Memcached
// (testbed up --cache memcached): expire deletes the hot items there at T,
// the cache figures are Memcached's own stats, the item queries Postgres
// ran are the replicas' loads, and the fleet lock (taken with add) cuts the
// herd as it does on Redis.
//
// Its faults act on Memcached too: an outage of the cache (redis, the
// cache's role) closes the Memcached proxy, and a restart of memcached
// empties it.
func TestStampedeOnAMemcachedTestbed(t *testing.T) {
	t.Parallel()
	opts := replica.DefaultOptions
	opts.Cache = replica.CacheMemcached
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000, Replica: opts})
	tg, err := subject.Open(context.Background(), tb.Status(), tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	if tg.Memcached == nil || tg.Caps().RedisKeys || !tg.Caps().MemcachedKeys || tg.Proxies[herd.Redis] != herd.Memcached {
		t.Fatalf("target on a Memcached testbed: memcached %v, caps %+v, proxies %v; want its items touched in Memcached, not Redis, and the cache's proxy Memcached's",
			tg.Memcached, tg.Caps(), tg.Proxies)
	}
	run := runOn(tg)
	t.Run("expire: the lock cuts the herd", func(t *testing.T) { expireOnMemcached(t, tb, tg) })
	t.Run("outage of the cache: every request loads while Memcached is away", func(t *testing.T) {
		p := faultPlan("outage", "none")
		p.Triggers.Set("dependency", herd.Redis)
		p.Arms[0].Knobs = p.Arms[0].Knobs.With("ttl", herd.Duration(time.Minute))
		a := run(t, p).Arms[0]
		if d, ok := a.Trigger.Detail.(*triggers.OutageDetail); !ok || d.Dependency != herd.Redis || d.Paused {
			t.Errorf("outage: detail %#v; want the cache's proxy closed, not a Redis paused", a.Trigger.Detail)
		}
		endedAfter(t, a, 1000)
		t.Logf("outage of Memcached: %d loads after T, drop rate %.3f", a.DB.Queries, a.HTTP.DropRate)
		// 200 req/s for the 1 s outage: with the items cached for a
		// minute, only Memcached's absence makes a request load
		if a.DB.Queries < 100 {
			t.Errorf("outage of Memcached: %d loads after T; want the requests of the outage loading (about 200)", a.DB.Queries)
		}
	})
	t.Run("restart memcached: the cache starts empty", func(t *testing.T) {
		p := faultPlan("restart", "none")
		p.Triggers.Set("restart", herd.Memcached)
		p.Arms[0].Knobs = p.Arms[0].Knobs.With("ttl", herd.Duration(time.Minute))
		p.After = herd.Duration(4 * time.Second)
		a := run(t, p).Arms[0]
		d, ok := a.Trigger.Detail.(*triggers.RestartDetail)
		if !ok || len(d.Restarted) != 1 || d.Restarted[0] != herd.Memcached {
			t.Fatalf("restart memcached: detail %#v; want memcached restarted", a.Trigger.Detail)
		}
		endedAfter(t, a, d.TookMS)
		t.Logf("restart memcached: took %d ms, %d loads after T", d.TookMS, a.DB.Queries)
		if a.DB.Queries < 50 { // the 100 hot keys, reloaded into an empty cache
			t.Errorf("restart memcached: %d loads after T; want the emptied cache reloaded", a.DB.Queries)
		}
	})
}

// expireOnMemcached is the stampede: none against the fleet lock.
func expireOnMemcached(t *testing.T, tb *local.Testbed, tg *subject.Testbed) {
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(200 * time.Millisecond)
	p := plan.Plan{Arms: arm.ClientKinds.Arms([]string{replica.None, replica.Lock}, replica.FullPatch(cfg)), Trigger: "expire", HotKeys: 20, Keys: 1000, Zipf: 1.1,
		Rate: 400, Clients: 40, Timeout: herd.Duration(time.Second), Warmup: herd.Duration(500 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second), Seed: 4}
	mc := &memcached.Client{Address: tb.Status().Memcached} // read apart from the run's own
	t.Cleanup(mc.Close)
	stats := func() observe.Sample {
		s, err := observe.Source{Memcached: mc}.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := stats()
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	after := stats()
	none, lock := rep.Arms[0], rep.Arms[1]
	t.Logf("db queries after T: none %d, lock %d; cache hits %d/%d", none.DB.Queries, lock.DB.Queries, none.Cache.Hits, lock.Cache.Hits)
	for _, a := range rep.Arms {
		d, ok := a.Trigger.Detail.(*triggers.ExpireDetail)
		if !ok || d.Memcached == nil || d.KeysRemoved != 20 {
			t.Errorf("arm %s: expire %#v; want the 20 hot items deleted in Memcached", a.Name, a.Trigger.Detail)
		}
		if a.Cache == nil || a.Cache.Hits == 0 || a.API.Value("loads") != a.DB.QueriesTotal {
			t.Errorf("arm %s: cache %+v, api.loads %d, db.queries_total %d; want Memcached's hits, and every load one item query", a.Name, a.Cache, a.API.Value("loads"), a.DB.QueriesTotal)
		}
	}
	// the arms' hits after T are within what Memcached counted over the run
	if got, total := none.Cache.Hits+lock.Cache.Hits, after.Hits-before.Hits; got > total || got == 0 {
		t.Errorf("cache.hits after T, both arms: %d; want some, and within Memcached's own get_hits over the run, %d", got, total)
	}
	if lock.DB.Queries > 2*20 || none.DB.Queries < 2*lock.DB.Queries {
		t.Errorf("db queries after T: none %d, lock %d; want the lock near the 20 hot keys and none at least twice it", none.DB.Queries, lock.DB.Queries)
	}
}
