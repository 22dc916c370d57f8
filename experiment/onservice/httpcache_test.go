package onservice_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/cachetest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// cacheOrigin is a testbed whose replicas are the origin behind an HTTP
// cache: no mitigation of their own, and a 200 ms query, so every request
// that passes the cache and misses Redis is one Postgres query.
func cacheOrigin(t *testing.T) *subject.Testbed {
	t.Helper()
	tb := startTestbed(t, 2)
	cfg := replica.DefaultConfig
	cfg.Strategy, cfg.QueryCost = "none", herd.Duration(200*time.Millisecond)
	if err := tb.Admin.SetConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return tb
}

// origins are the replicas' host:port.
func origins(tb *subject.Testbed) []string {
	var out []string
	for _, u := range tb.Status.API {
		out = append(out, strings.TrimPrefix(u, "http://"))
	}
	return out
}

// behindCache is the testbed as a service behind the cache at base: the
// load and the invalidations go to the cache, Redis and Postgres are the
// service's, and cache (YAML) says how the cache is invalidated and how
// its arms are chosen.
func behindCache(t *testing.T, tb *subject.Testbed, base, cache string) *targets.Target {
	t.Helper()
	y := fmt.Sprintf(`name: the testbed behind a cache
endpoints: [%q]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 20}, hot: 20}
redis: {address: %q, key: "item:{key}", pattern: "item:*"}
postgres: {dsn: "${HB_TEST_PG}", role: herdbench_app, statements: "pg_sleep"}
`, base, strings.TrimPrefix(tb.Status.Redis, "redis://")) + cache
	return openService(t, y, map[string]string{"HB_TEST_PG": tb.Status.Postgres})
}

// cachePlan runs each arm, chosen by its X-Arm header, at 400 req/s over
// 20 hot keys: 20 requests a second for each.
func cachePlan(trigger string, arms ...string) plan.Plan {
	p := servicePlan(trigger)
	p.Rate, p.Clients, p.HotKeys = 400, 40, 20
	// 3 s after T: an nginx entry valid a second past T (its validity is
	// whole seconds) still leaves two of herd; half a second warms 40
	// clients' connections, and a second before T is 400 requests
	p.Warmup, p.Before, p.After = herd.Duration(500*time.Millisecond), herd.Duration(time.Second), herd.Duration(3*time.Second)
	for _, a := range arms {
		p.Arms = append(p.Arms, arm.Arm{Name: a, Select: &arm.Select{Headers: map[string]string{"X-Arm": a}}})
	}
	return p
}

// logCacheTable logs the arms as the docs' tables show them.
func logCacheTable(t *testing.T, title string, rep *Report) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%-12s %10s %10s %8s %10s\n", title, "arm", "db queries", "p50", "p99", "drop rate")
	for _, a := range rep.Arms {
		fmt.Fprintf(&b, "%-12s %10d %8.1fms %6.1fms %9.2f%%\n", a.Name, a.DB.Queries, a.HTTP.P50MS, a.HTTP.P99MS, 100*a.HTTP.DropRate)
	}
	t.Log(b.String())
}

// armNamed is rep's arm by name.
func armNamed(t *testing.T, rep *Report, name string) result.ArmResult {
	t.Helper()
	for _, a := range rep.Arms {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no arm %s in %v", name, rep.Arms)
	return result.ArmResult{}
}

// purged is what expire's purges were answered.
func purged(t *testing.T, a result.ArmResult) *triggers.CacheAnswers {
	t.Helper()
	d, ok := a.Trigger.Detail.(*triggers.ExpireDetail)
	if !ok || d.HTTPCache == nil {
		t.Fatalf("arm %s: trigger detail %#v; want expire's, with the HTTP cache's answers", a.Name, a.Trigger.Detail)
	}
	return d.HTTPCache
}

// nginx in front of the replicas: a purge at T is a cold key, which only
// proxy_cache_lock coalesces; entries that expire together are served
// stale by proxy_cache_use_stale updating while one request refreshes.
// Postgres, behind the replicas' Redis, counts what passed the cache.
func TestNginxCacheArms(t *testing.T) {
	t.Parallel()
	tb := cacheOrigin(t)
	p := cachePlan("expire", "none", "lock", "stale")
	const purge = "http_cache: {purge: {method: GET, path: \"/purge/items/{key}\"}}\n"

	t.Run("cold keys: purged at T", func(t *testing.T) {
		svc := behindCache(t, tb, cachetest.Nginx(t, origins(tb), time.Minute), purge)
		rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}})
		if err != nil {
			t.Fatal(err)
		}
		logCacheTable(t, "nginx, hot keys purged at T (and unlinked in Redis)", rep)
		none, lock, stale := armNamed(t, rep, "none"), armNamed(t, rep, "lock"), armNamed(t, rep, "stale")
		for _, a := range rep.Arms {
			// the warm cached every hot key, so nginx held each at T: its
			// purge answers 200 for an entry it removed, 404 for none
			if c := purged(t, a); c.Sent != 20 || c.Statuses["200"] != 20 || c.Errors != 0 {
				t.Errorf("arm %s: purges %+v; want 20 sent, all 20 answered 200 by nginx", a.Name, c)
			}
		}
		// the lock lets one request a key through: about one query each
		if lock.DB.Queries > 2*20 || none.DB.Queries < 2*lock.DB.Queries {
			t.Errorf("db queries after T: none %d, lock %d; want the lock near the 20 hot keys and none at least twice it", none.DB.Queries, lock.DB.Queries)
		}
		// a purged entry has no stale copy to serve: use_stale is no help
		if stale.DB.Queries < 2*lock.DB.Queries {
			t.Errorf("db queries after T: stale %d, lock %d; want stale to herd as none does on a cold key", stale.DB.Queries, lock.DB.Queries)
		}
	})

	t.Run("expired entries: validity ends together", func(t *testing.T) {
		// the warm caches the hot keys just before the load; valid for the
		// warmup, the before window and one second, they expire together
		// about a second after T, when the ttl trigger has expired Redis'
		// copies (at T), so every request nginx lets through queries
		valid := time.Duration(p.Warmup) + time.Duration(p.Before) + time.Second
		svc := behindCache(t, tb, cachetest.Nginx(t, origins(tb), valid), purge)
		p := p
		p.Trigger = "ttl"
		rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}})
		if err != nil {
			t.Fatal(err)
		}
		logCacheTable(t, "nginx, hot entries expiring together after T (Redis' at T)", rep)
		none, stale := armNamed(t, rep, "none"), armNamed(t, rep, "stale")
		if stale.DB.Queries > 2*20 || none.DB.Queries < 2*stale.DB.Queries {
			t.Errorf("db queries after T: none %d, stale %d; want stale near one refresh a hot key and none at least twice it", none.DB.Queries, stale.DB.Queries)
		}
		// clients of stale were answered from the cache while it refreshed
		if stale.HTTP.P99MS >= none.HTTP.P99MS {
			t.Errorf("p99: stale %.1f ms, none %.1f ms; want stale's below none's", stale.HTTP.P99MS, none.HTTP.P99MS)
		}
	})
}

// Varnish in front of the replicas: its waiting list coalesces the
// requests for an object being fetched (cold or expired), unless
// hash_ignore_busy turns it off; grace serves an expired object while one
// background fetch refreshes it. A soft purge expires the hot keys at T,
// a hard one removes them; BAN empties the cache.
func TestVarnishCacheArms(t *testing.T) {
	t.Parallel()
	tb := cacheOrigin(t)
	base := cachetest.Varnish(t, origins(tb), time.Minute)
	p := cachePlan("expire", "nocoalesce", "coalesce", "grace")
	cache := func(mode string) string {
		return fmt.Sprintf("http_cache:\n  purge: {method: PURGE, path: \"/items/{key}\", headers: {X-Purge: %s}}\n"+
			"  flush: {method: BAN, path: /, headers: {X-Ban-Url: \"^/items/\"}}\n", mode)
	}
	for _, c := range []struct{ mode, title string }{{"hard", "removed"}, {"soft", "expired"}} {
		t.Run(c.title+" at T", func(t *testing.T) {
			svc := behindCache(t, tb, base, cache(c.mode))
			rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}})
			if err != nil {
				t.Fatal(err)
			}
			logCacheTable(t, "Varnish, hot keys "+c.title+" at T ("+c.mode+" purge; unlinked in Redis)", rep)
			for _, a := range rep.Arms {
				if a := purged(t, a); a.Sent != 20 || a.Statuses["200"] != 20 {
					t.Errorf("purges %+v; want 20 sent, all 20 answered 200 by Varnish", a)
				}
			}
			off, on, grace := armNamed(t, rep, "nocoalesce"), armNamed(t, rep, "coalesce"), armNamed(t, rep, "grace")
			if on.DB.Queries > 2*20 || off.DB.Queries < 2*on.DB.Queries {
				t.Errorf("db queries after T: nocoalesce %d, coalesce %d; want coalescing near the 20 hot keys and none at least twice it", off.DB.Queries, on.DB.Queries)
			}
			if grace.DB.Queries > 2*20 {
				t.Errorf("db queries after T: grace %d; want it near the 20 hot keys", grace.DB.Queries)
			}
			if c.mode == "soft" && grace.HTTP.P99MS >= on.HTTP.P99MS {
				t.Errorf("p99 of expired objects: grace %.1f ms, coalesce %.1f ms; want grace's below: it serves the stale object", grace.HTTP.P99MS, on.HTTP.P99MS)
			}
		})
	}

	t.Run("flush: BAN", func(t *testing.T) {
		svc := behindCache(t, tb, base, cache("hard"))
		p := cachePlan("flush", "coalesce")
		rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}})
		if err != nil {
			t.Fatal(err)
		}
		d, ok := rep.Arms[0].Trigger.Detail.(*triggers.FlushDetail)
		if !ok || d.HTTPCache == nil || d.HTTPCache.Sent != 1 || d.HTTPCache.Statuses["200"] != 1 || d.HTTPCache.Method != "BAN" {
			t.Fatalf("flush detail %#v; want one BAN, answered 200", rep.Arms[0].Trigger.Detail)
		}
		if q := rep.Arms[0].DB.Queries; q < 20 {
			t.Errorf("db queries after the BAN: %d; want every hot key loaded again, at least 20", q)
		}
	})
}
