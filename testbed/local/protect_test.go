package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/jackc/pgx/v5"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
)

func TestRateLimitBoundsLoads(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	f.configure(`{"strategy":"ratelimit","rate_limit":10,"rate_burst":2,"query_cost":"1ms"}`)
	const n = 90
	for i := range n {
		f.expire(int64(400+i), true)
	}
	shed := 0
	start := time.Now()
	loads := f.loads(func() {
		for i := range n {
			if f.get(i, int64(400+i)) == "status 503 Service Unavailable" {
				shed++
			}
		}
	})
	took := time.Since(start)
	// per replica: the burst, then 10 a second
	bound := len(tb.Status().API) * (2 + int(10*took.Seconds()+1))
	if loads > bound || loads+shed != n {
		t.Errorf("ratelimit 10/s burst 2: %d loads and %d shed of %d misses in %v; want at most %d loads and every other request shed", loads, shed, n, took, bound)
	}
	if got := int(f.metric("herdbench_api_shed_total")); got != shed {
		t.Errorf("herdbench_api_shed_total = %d; clients saw %d shed", got, shed)
	}
}

func TestBreakerOpensUnderAnOutageAndClosesAfter(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	f.configure(`{"strategy":"breaker","breaker_failures":3,"breaker_open":"300ms","query_cost":"1ms"}`)
	pg, err := toxiclient.NewClient(tb.Status().Toxiproxy).Proxy("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Disable(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Enable() })
	outcomes := map[string]int{}
	for i := range 30 { // uncached ids without stale copies: every one a load
		id := int64(500 + i)
		f.expire(id, true)
		outcomes[f.get(i, id)]++
	}
	if opens := f.metric("herdbench_api_breaker_opens_total"); opens < 1 || outcomes["status 503 Service Unavailable"] == 0 {
		t.Fatalf("breaker under an outage: %v opens, outcomes %v; want it open and failing fast (503)", opens, outcomes)
	}
	if err := pg.Enable(); err != nil {
		t.Fatal(err)
	}
	// after breaker_open a trial load goes through and closes it
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		ok := 0
		for r := range len(tb.Status().API) {
			id := int64(600 + 3*i + r) // a fresh miss on each replica
			f.expire(id, true)
			if f.get(r, id) == admin.OutcomeMiss {
				ok++
			}
		}
		if ok == len(tb.Status().API) {
			break // every replica's breaker is closed again
		}
		if time.Now().After(deadline) {
			t.Fatal("breaker still refusing loads 10s after the outage ended")
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
}

// activeLoads counts the item queries running in Postgres now, as
// pg_stat_activity shows them: the DB concurrency shed bounds.
func (f *fleet) activeLoads(ctx context.Context, conn *pgx.Conn) int {
	var n int
	err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE usename = $1 AND state = 'active' AND query = $2`, testbed.AppRole, api.ItemQuery).Scan(&n)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// peakLoads runs fn while sampling pg_stat_activity, and returns the most
// item queries seen running at once.
func (f *fleet) peakLoads(fn func()) int {
	f.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.st.Postgres)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	peak := 0
	for {
		select {
		case <-done:
			return peak
		default:
		}
		peak = max(peak, f.activeLoads(ctx, conn))
	}
}

func TestShedBoundsDBConcurrency(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	replicas := len(tb.Status().API)
	const n, limit = 60, 2
	// n misses of distinct items at once: nothing to coalesce, every one a
	// load unless shed
	herd := func(base int64) (shed int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			f.expire(base+int64(i), true)
			wg.Go(func() {
				<-start
				if f.get(i, base+int64(i)) == "status 503 Service Unavailable" {
					mu.Lock()
					shed++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		return shed
	}

	// the control: without shed the herd fills every replica's pool
	f.configure(`{"strategy":"none","query_cost":"300ms"}`)
	if peak := f.peakLoads(func() { herd(700) }); peak <= replicas*limit {
		t.Fatalf("none: at most %d item queries at once; want more than %d, or the bound below proves nothing", peak, replicas*limit)
	}
	f.drain()

	f.configure(fmt.Sprintf(`{"strategy":"shed","shed_min_limit":1,"shed_max_limit":%d,"shed_initial_limit":%d,"query_cost":"300ms"}`, limit, limit))
	var shed, peak int
	loads := f.loads(func() { peak = f.peakLoads(func() { shed = herd(800) }) })
	if peak > replicas*limit {
		t.Errorf("shed with a limit of %d per replica: %d item queries at once over %d replicas; want at most %d", limit, peak, replicas, replicas*limit)
	}
	if loads+shed != n || shed == 0 {
		t.Errorf("shed: %d loads and %d shed of %d misses; want every miss loaded or shed, some shed", loads, shed, n)
	}
	if got := int(f.metric("herdbench_api_shed_total")); got != shed {
		t.Errorf("herdbench_api_shed_total = %d; clients saw %d shed", got, shed)
	}
	if got := int(f.metric("herdbench_api_shed_limit")); got < replicas || got > replicas*limit {
		t.Errorf("herdbench_api_shed_limit = %d over %d replicas; want between %d and %d", got, replicas, replicas, replicas*limit)
	}
}

func TestShedPriorityServesCriticalRequestsFirst(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	// capacity: 3 replicas x 2 loads at once / 100ms = 60 loads/s; offered:
	// 150 misses/s for 3 s, a fifth of them critical
	// each a miss: items expire 1ms after they are set
	f.configure(`{"strategy":"shed_priority","shed_min_limit":1,"shed_max_limit":2,"shed_initial_limit":2,"shed_wait":"1s","ttl":"1ms","query_cost":"100ms"}`)
	const rate, seconds = 150, 3
	type tally struct{ sent, ok, shed int }
	var mu sync.Mutex
	var critical, normal tally
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	start := time.Now()
	for i := range rate * seconds {
		<-tick.C
		crit := i%5 == 0
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/items/%d", f.st.API[i%len(f.st.API)], 1+i%500), nil)
			if crit {
				req.Header.Set(admin.PriorityHeader, admin.PriorityCritical)
			}
			resp, err := http.DefaultClient.Do(req)
			code := 0
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			mu.Lock()
			defer mu.Unlock()
			tl := &normal
			if crit {
				tl = &critical
			}
			if time.Since(start) < time.Second {
				return // the first second calibrates the threshold
			}
			tl.sent++
			switch code {
			case http.StatusOK:
				tl.ok++
			case http.StatusServiceUnavailable:
				tl.shed++
			}
		})
	}
	tick.Stop()
	wg.Wait()
	f.drain()
	share := func(t tally) float64 { return float64(t.ok) / float64(max(t.sent, 1)) }
	t.Logf("critical: %+v (%.0f%% served); normal: %+v (%.0f%% served)", critical, 100*share(critical), normal, 100*share(normal))
	if normal.shed == 0 {
		t.Fatalf("normal requests: %+v; want an overload that sheds some", normal)
	}
	// served first: critical requests lose at most half the share that
	// normal ones lose, and nine in ten are served
	if lost := 1 - share(critical); share(critical) < 0.9 || lost > (1-share(normal))/2 {
		t.Errorf("shed_priority: %.0f%% of critical and %.0f%% of normal requests served; want critical ones served first (90%% or more, losing at most half the share normal ones lose)",
			100*share(critical), 100*share(normal))
	}
}
