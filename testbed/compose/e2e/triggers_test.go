package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// plan is a short plan of one arm over 100 keys whose items expire every
// 20ms, so nearly every request reaches Postgres, with trigger's options
// set from pairs.
func pl(t *testing.T, trigger string, ttl time.Duration, a string, opts ...string) plan.Plan {
	t.Helper()
	cfg := replica.DefaultConfig
	cfg.TTL = herd.Duration(ttl)
	cfg.QueryCost = herd.Duration(5 * time.Millisecond)
	reg := triggers.Default()
	for i := 0; i+1 < len(opts); i += 2 {
		if err := reg.Set(opts[i], opts[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return plan.Plan{
		Arms: arm.ClientKinds.Arms([]string{a}, replica.FullPatch(cfg)), Trigger: trigger, Triggers: reg,
		HotKeys: 100, Keys: 100, Zipf: 1.1, Rate: 200, Clients: 20,
		Timeout: herd.Duration(time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(2500 * time.Millisecond), Seed: 5,
	}
}

// everyTrigger fires each trigger the docker provider supports on the
// containers, and checks its effect in the servers' own counters: Postgres
// (pg_stat_statements, pg_stat_activity), Redis INFO, the replicas'
// /metrics, toxiproxy's API and the engine.
func everyTrigger(t *testing.T, tg *subject.Testbed, toxiproxy string) {
	run := func(t *testing.T, p plan.Plan) result.ArmResult {
		t.Helper()
		rep, err := experiment.Run(context.Background(), p, experiment.Env{Target: tg.Target, Subject: tg})
		if err != nil {
			t.Fatal(err)
		}
		a := rep.Arms[0]
		if !outcomesAddUp(a.HTTP) || a.Trigger.FiredAt == nil {
			t.Errorf("%s: outcomes %+v, fired at %v; want every request counted and the trigger fired", p.Trigger, a.HTTP, a.Trigger.FiredAt)
		}
		return a
	}
	t.Run("expire: the hot keys reload", func(t *testing.T) {
		a := run(t, pl(t, "expire", time.Minute, replica.None))
		// the Zipf draw reaches most of the 100 keys in 2.5 s, not all
		if n := a.Trigger.Detail.(*triggers.ExpireDetail).KeysRemoved; n != 100 || a.DB.Queries < 50 || a.DB.Queries > 100 {
			t.Errorf("expire: %d keys removed, %d loads after T; want 100 removed, and most of them reloaded once", n, a.DB.Queries)
		}
	})
	t.Run("flush: Redis empties and the cache reloads", func(t *testing.T) {
		a := run(t, pl(t, "flush", time.Minute, replica.None))
		if n := a.Trigger.Detail.(*triggers.FlushDetail).KeysFlushed; n < 100 || a.DB.Queries < 50 {
			t.Errorf("flush: %d keys flushed, %d loads after T; want the cache emptied and reloaded", n, a.DB.Queries)
		}
	})
	t.Run("conndrop through the toxiproxy container: every replica reconnects", func(t *testing.T) {
		a := run(t, pl(t, "conndrop", 20*time.Millisecond, replica.None))
		// 3 replicas, each with a pool of 10 Postgres connections, reopened
		// as the load needs them: most of the 30 within the window
		if a.DB.NewConnections < 20 || a.Cache.ConnectionsReceived < 3 {
			t.Errorf("conndrop: %d new Postgres backends, %d Redis connections after T; want most of the replicas' pools (30) and every replica back on Redis",
				a.DB.NewConnections, a.Cache.ConnectionsReceived)
		}
	})
	t.Run("outage through the toxiproxy container: loads fail, then recover", func(t *testing.T) {
		a := run(t, pl(t, "outage", 20*time.Millisecond, replica.None, "outage", "1s"))
		if a.HTTP.DropRate < 0.1 || a.API.Value("load_errors") == 0 {
			t.Errorf("outage 1s: drop rate %.3f, api.load_errors %d; want failed loads at the replicas", a.HTTP.DropRate, a.API.Value("load_errors"))
		}
		// and the proxy open again, by toxiproxy's own word
		if p := toxiproxyState(t, toxiproxy)["postgres"]; !p.Enabled {
			t.Errorf("after the outage, toxiproxy's postgres proxy: %+v; want enabled", p)
		}
	})
	t.Run("slowdb through the toxiproxy container: replies slow down for a while", func(t *testing.T) {
		a := run(t, pl(t, "slowdb", 20*time.Millisecond, replica.None, "slowdb_latency", "300ms", "slowdb_for", "1s"))
		// back after: most rows from 800 ms after the fault, not every one
		// (one request stalled on a shared 2-core machine makes its row's p99)
		var slow float64
		var after, back int
		for _, r := range a.Timeline {
			switch {
			case r.TMS >= 200 && r.TMS < 800:
				slow = max(slow, r.P99MS)
			case r.TMS >= 1800:
				after++
				if r.P99MS < 300 {
					back++
				}
			}
		}
		if slow < 300 || back*5 < after*4 {
			t.Errorf("slowdb 300ms for 1s: p99 %.0fms during it; %d of %d rows under 300ms after; want at least 300ms during, 80%% of the rows back after", slow, back, after)
		}
	})
	t.Run("notify: every replica wakes and reloads", func(t *testing.T) {
		p := pl(t, "notify", time.Minute, replica.None)
		p.HotKeys = 20
		a := run(t, p)
		if r := a.Trigger.Detail.(*triggers.NotifyDetail).Receivers; r != 3 || a.DB.Queries < 3*20 {
			t.Errorf("notify: %d receivers, %d loads after T; want the 3 replicas, each reloading the 20 keys", r, a.DB.Queries)
		}
	})
	t.Run("burst: 1,000 released clients all answer", func(t *testing.T) {
		a := run(t, pl(t, "burst", time.Minute, replica.None, "burst", "1000"))
		// every burst request reads the cache once: Redis counts them
		if a.Burst == nil || a.Burst.Clients != 1000 || a.Burst.OK != 1000 || a.Cache.Hits+a.Cache.Misses < 1000 {
			t.Errorf("burst of 1,000: %+v, Redis counted %d keyspace reads after T; want 1,000 released, answered and read", a.Burst, a.Cache.Hits+a.Cache.Misses)
		}
	})
	// a restart is seen where it happened: the engine's start time of each
	// api container, Redis' run_id, Postgres' postmaster start time
	started := func(t *testing.T, part string) string {
		t.Helper()
		ctx := context.Background()
		switch part {
		case "redis":
			info, err := tg.Redis.Info(ctx, "server").Result()
			if err != nil {
				t.Fatal(err)
			}
			_, rest, _ := strings.Cut(info, "run_id:")
			id, _, _ := strings.Cut(rest, "\r\n")
			return id
		case "postgres":
			var at time.Time
			if err := tg.DB.QueryRow(ctx, "SELECT pg_postmaster_start_time()").Scan(&at); err != nil {
				t.Fatal(err)
			}
			return at.String()
		default:
			out, err := exec.Command("docker", "inspect", "-f", "{{.State.StartedAt}}",
				"herdbench-api-1-1", "herdbench-api-2-1", "herdbench-api-3-1").CombinedOutput()
			if err != nil {
				t.Fatalf("docker inspect: %v: %s", err, out)
			}
			return string(out)
		}
	}
	for _, part := range []string{"api", "api-2", "redis", "postgres"} {
		t.Run("restart "+part+" through the engine", func(t *testing.T) {
			before := started(t, part)
			p := pl(t, "restart", time.Minute, replica.None, "restart", part)
			// the engine restarts a container in about a second, and in
			// two or three on a busy machine: the window must outlast it
			// for the reconnected replicas to be seen
			p.After = herd.Duration(4500 * time.Millisecond)
			a := run(t, p)
			if got := a.Trigger.Detail.(*triggers.RestartDetail).Restarted; len(got) == 0 {
				t.Errorf("restart %s: detail %v; want what was restarted", part, a.Trigger.Detail)
			}
			after := started(t, part)
			if after == before {
				t.Errorf("restart %s: started %q before and after the run; want a new start", part, before)
			}
			if part == "api" && strings.Count(after, "\n") != 3 {
				t.Errorf("restart api: start times %q; want the 3 replicas'", after)
			}
			if was, is := strings.Split(before, "\n"), strings.Split(after, "\n"); part == "api-2" &&
				(len(is) < 3 || was[0] != is[0] || was[1] == is[1] || was[2] != is[2]) {
				t.Errorf("restart api-2: start times %q, then %q; want api-2's alone new (one replica's herd: the others serve on)", was, is)
			}
			switch part {
			case "redis": // a new, empty Redis: reconnected replicas reload what is asked
				if a.DB.Queries == 0 || a.Cache.ConnectionsReceived < 3 {
					t.Errorf("restart redis: %d loads, %d Redis connections after T; want loads by reconnected replicas",
						a.DB.Queries, a.Cache.ConnectionsReceived)
				}
			case "postgres": // every replica's pool reconnects
				if a.DB.NewConnections < 3 {
					t.Errorf("restart postgres: %d new backends; want the replicas reconnected", a.DB.NewConnections)
				}
			}
		})
	}
}
