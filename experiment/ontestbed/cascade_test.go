package ontestbed_test

import (
	"context"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// A cascade on a two-tier testbed: Postgres goes away for a second while
// the clients, the edges (A) and the replicas (B) all retry twice. Each
// layer's figure comes from the counters of the layer that received it and
// is tied here to the layer above's; in the outage every request at B
// tries the database three times; and a breaker at A cuts the end-to-end
// amplification.
func TestCascadeMultipliesLayerByLayer(t *testing.T) {
	t.Parallel()
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000, Tiers: local.TwoTiers,
		Edge: edge.Options{Config: edge.Config{Timeout: herd.Duration(time.Second)}}})
	tg, err := subject.Open(context.Background(), tb.Status(), tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	twice, err := retry.Parse("immediate:2")
	if err != nil {
		t.Fatal(err)
	}
	cfg := replica.DefaultConfig
	cfg.TTL = herd.Duration(20 * time.Millisecond) // nearly every request reaches Postgres
	cfg.QueryCost = herd.Duration(5 * time.Millisecond)
	cfg.DBRetry = replica.DBRetry{Policy: twice}
	everywhere := arm.Arm{Name: "everywhere", Knobs: replica.FullPatch(cfg), Retry: &twice, Edge: herd.SettingsOf(edge.Patch{Retry: &twice})}
	breaker := everywhere
	breaker.Name = "a-breaker"
	breaker.Edge = herd.SettingsOf(edge.Patch{Retry: &twice, Breaker: &retry.Breaker{Failures: 5, Open: 2 * time.Second}})
	p := plan.Plan{
		Arms: []arm.Arm{everywhere, breaker}, Trigger: "outage", HotKeys: 100, Keys: 100, Zipf: 1.1, Rate: 200, Clients: 20,
		Timeout: herd.Duration(2 * time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second), Seed: 11,
		Triggers: TriggerOptions("outage", "1s"),
	}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*result.Layers{}
	for _, a := range rep.Arms {
		l := a.Layers
		if l == nil || a.Edge == nil {
			t.Fatalf("%s: no layers or edge figures on a two-tier testbed", a.Name)
		}
		byName[a.Name] = l
		t.Logf("%s: %+v; edge %+v", a.Name, *l, a.Edge.Counters)
		// each layer received what the layer above sent, counted on both
		// sides; but for attempts A canceled (its client gone) before B's
		// handler counted them, which a saturated CI machine showed once
		// (B 2760 of A's 2795, with 912 canceled)
		canceled := a.Edge.Counters.Outcomes["canceled"]
		if l.Edge != l.ClientAttempts || l.API > l.EdgeAttempts || l.EdgeAttempts-l.API > canceled {
			t.Errorf("%s: at A %d, the clients sent %d; at B %d, A sent %d (%d canceled); want the first pair equal, and B short of A by canceled attempts at most",
				a.Name, l.Edge, l.ClientAttempts, l.API, l.EdgeAttempts, canceled)
		}
		if l.API != a.API.Value("requests") || l.DBAttempts != a.API.Value("loads")+a.API.Value("load_errors") || l.DBQueries != a.DB.QueriesTotal {
			t.Errorf("%s: layers %+v; want B's requests %d, B's loads + load errors %d, pg_stat_statements %d", a.Name, *l,
				a.API.Value("requests"), a.API.Value("loads")+a.API.Value("load_errors"), a.DB.QueriesTotal)
		}
		if l.DBQueries > l.DBAttempts || l.Requests < int64(p.Rate)*3 {
			t.Errorf("%s: %d queries completed of %d attempts, %d client requests; want completed <= attempted, and the whole load's requests", a.Name, l.DBQueries, l.DBAttempts, l.Requests)
		}
		// the timeline's rows hold the same counters, over a part of the load
		var rows result.Layers
		for _, r := range a.Timeline {
			rows.Edge, rows.EdgeAttempts, rows.API, rows.DBAttempts = rows.Edge+r.Edge, rows.EdgeAttempts+r.EdgeAttempts, rows.API+r.API, rows.DBAttempts+r.DBAttempts
		}
		if rows.Edge == 0 || rows.Edge > l.Edge || rows.EdgeAttempts > l.EdgeAttempts || rows.API > l.API || rows.DBAttempts > l.DBAttempts {
			t.Errorf("%s: the rows sum to %+v; want more than none, within the arm's %+v", a.Name, rows, *l)
		}
	}
	// in the outage's heart, every request that reached B tried the
	// database three times (db_retry immediate:2): about 3 attempts a
	// request on a quiet machine, 2.3 and 2.0 seen in CI beside three other
	// load tests, as an attempt the outage holds is counted in a later
	// 100 ms row than its request; without B's retries it would be 1
	var api, db int64
	for _, r := range rep.Arms[0].Timeline {
		if r.TMS >= 200 && r.TMS < 800 {
			api, db = api+r.API, db+r.DBAttempts
		}
	}
	if api == 0 || float64(db)/float64(api) < 1.5 {
		t.Errorf("everywhere, T+200ms to T+800ms: %d database attempts for %d requests at B; want about 3 each, and well over 1", db, api)
	}
	if e, b := byName["everywhere"], byName["a-breaker"]; b.EndToEnd >= e.EndToEnd || b.EdgeAmp >= e.EdgeAmp {
		t.Errorf("a breaker at A: %.3f database attempts per client request, x%.2f at A; retries everywhere %.3f, x%.2f; want the breaker's lower",
			b.EndToEnd, b.EdgeAmp, e.EndToEnd, e.EdgeAmp)
	}
}
