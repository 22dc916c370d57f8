package onservice_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"golang.org/x/sync/singleflight"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/storetest"
	"github.com/herdbench/herdbench/triggers"
)

// itemQuery is what the shop service runs on a miss: 200 ms in MariaDB,
// once it may read the row (a shared lock: a test may hold rows locked).
const itemQuery = "SELECT v, SLEEP(0.2) FROM items WHERE id = ? LOCK IN SHARE MODE"

// shopService is a service on Memcached and MariaDB, as a team would run
// it: GET /items/{id} reads item:{id} from Memcached and, on a miss, runs
// itemQuery and sets the item for 300 s, or X-TTL seconds. With X-Arm:
// coalesce, concurrent misses of one key share one query (singleflight);
// otherwise each runs its own.
func shopService(t *testing.T, mcAddr, dsn string) string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(200)
	db.SetMaxIdleConns(200)
	t.Cleanup(func() { db.Close() })
	mc := memcache.New(mcAddr)
	mc.MaxIdleConns, mc.Timeout = 200, 2*time.Second
	t.Cleanup(func() { mc.Close() })
	var flights singleflight.Group
	load := func(ctx context.Context, id string, ttl int32) (string, error) {
		var v string
		if err := db.QueryRowContext(ctx, itemQuery, id).Scan(&v, new(int)); err != nil {
			return "", err
		}
		return v, mc.Set(&memcache.Item{Key: "item:" + id, Value: []byte(v), Expiration: ttl})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if it, err := mc.Get("item:" + id); err == nil {
			w.Write(it.Value)
			return
		} else if !errors.Is(err, memcache.ErrCacheMiss) {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		ttl := int32(300)
		if s, err := strconv.Atoi(r.Header.Get("X-TTL")); err == nil {
			ttl = int32(s)
		}
		var v any
		var err error
		if r.Header.Get("X-Arm") == "coalesce" {
			v, err, _ = flights.Do(id, func() (any, error) { return load(context.WithoutCancel(r.Context()), id, ttl) })
		} else {
			v, err = load(r.Context(), id, ttl)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, v)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sleepCalls is COUNT_STAR of itemQuery's digest, read by root: the
// source db.queries must agree with.
func sleepCalls(t *testing.T, m *storetest.MariaDB) int64 {
	t.Helper()
	var n int64
	err := m.Root().QueryRow(`SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_statements_summary_by_digest
		WHERE DIGEST_TEXT LIKE '%SLEEP%FROM ` + "`items`" + `%'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// shopTarget starts MariaDB and Memcached, the shop service on them, and
// returns MariaDB and the service as a target file describes it, connected.
func shopTarget(t *testing.T) (*storetest.MariaDB, *targets.Target) {
	t.Helper()
	m := storetest.StartMariaDB(t)
	mcAddr := storetest.Memcached(t)
	m.Exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.items (id INT PRIMARY KEY, v VARCHAR(50))")
	for i := 1; i <= 20; i++ {
		m.Exec(t, fmt.Sprintf("INSERT INTO shop.items VALUES (%d, 'item %d')", i, i))
	}
	m.CreateUser(t, "shop", "shop-pw", "ALL ON shop.*")
	m.CreateUser(t, "hb", "hb-pw", storetest.ObserverGrants...)
	// the service sends its statements as text: MariaDB's digests do not
	// count executions of statements prepared on the server
	base := shopService(t, mcAddr, m.DSN("shop", "shop-pw", "shop")+"?interpolateParams=true")

	y := fmt.Sprintf(`name: shop on Memcached and MariaDB
endpoints: [%q]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 20}, hot: 20}
mysql: {dsn: "${HB_TEST_MYSQL}", user: shop, statements: "SLEEP.*FROM .items."}
memcached: {address: %q, key: "item:{key}"}
arms:
  - {name: none}
  - {name: coalesce, headers: {X-Arm: coalesce}}
`, base, mcAddr)
	svc := openService(t, y, map[string]string{"HB_TEST_MYSQL": m.DSN("hb", "hb-pw", "")})
	return m, svc
}

// A service on Memcached and MariaDB, described by a target file: expire
// at T is a herd, which db.queries counts as MariaDB's digest table does,
// exactly, fills included; a gate reads db.queries as on Postgres. In the
// coalesce arm the test holds 10 of the 20 items' rows locked from
// before T to the load's end, so their loads outlive their clients and
// complete in the drain: db.drain_queries is what MariaDB counted from
// the load's end, most of those 10.
func TestMemcachedMariaDBService(t *testing.T) {
	t.Parallel()
	m, svc := shopTarget(t)
	localtest.Measures(t)
	drain := &heldRows{m: m, arm: "coalesce", ids: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, atLoadEnd: -1}

	p := servicePlan("expire", arm.Arm{Name: "none"}, arm.Arm{Name: "coalesce", Select: &arm.Select{Headers: map[string]string{"X-Arm": "coalesce"}}})
	p.Rate, p.Clients, p.Timeout = 400, 40, herd.Duration(3*time.Second)
	gate, err := gates.Parse("db.queries <= 60")
	if err != nil {
		t.Fatal(err)
	}
	p.Gates = []gates.Gate{gate}
	if err := p.ValidateFor(svc, nil); err != nil {
		t.Fatal(err)
	}
	before := sleepCalls(t, m)
	rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}, Progress: drain.progress})
	if err != nil {
		t.Fatal(err)
	}
	after := sleepCalls(t, m)
	if drain.err != nil {
		t.Fatal(drain.err)
	}

	var counted int64
	for _, a := range rep.Arms {
		if a.DB == nil || a.Cache == nil {
			t.Fatalf("arm %s: db %v, cache %v; want MariaDB and Memcached observed", a.Name, a.DB, a.Cache)
		}
		d, ok := a.Trigger.Detail.(*triggers.ExpireDetail)
		t.Logf("arm %s: db.queries %d (total %d, warm %d), peak %.0f q/s, cache hits %d misses %d, p99 %.1f ms, expire %+v",
			a.Name, a.DB.Queries, a.DB.QueriesTotal, a.Warm.Queries, a.DB.PeakQPS, a.Cache.Hits, a.Cache.Misses, a.HTTP.P99MS, d.Memcached)
		if !ok || d.Memcached == nil || d.Memcached.Found == nil || *d.Memcached.Found != 20 || d.KeysRemoved != 20 {
			t.Errorf("arm %s: expire %#v; want the 20 hot items, warmed, deleted at T", a.Name, a.Trigger.Detail)
		}
		if a.Cache.Misses < a.DB.Queries {
			t.Errorf("arm %s: %d misses after T, %d queries; want a miss before each query", a.Name, a.Cache.Misses, a.DB.Queries)
		}
		counted += a.Warm.Queries + a.DB.QueriesTotal
	}
	if after-before != counted {
		t.Errorf("MariaDB's COUNT_STAR grew %d; the arms counted %d (warm + db.queries_total); want them equal", after-before, counted)
	}
	none, coalesce := armNamed(t, rep, "none"), armNamed(t, rep, "coalesce")
	if none.DB.Queries < 2*20 || none.DB.Queries < 2*coalesce.DB.Queries {
		t.Errorf("db.queries after T: none %d, coalesce %d; want a herd on none (over two loads a hot key) and coalesce at most half of it",
			none.DB.Queries, coalesce.DB.Queries)
	}
	drained := after - drain.atLoadEnd
	t.Logf("coalesce: db.queries %d, db.drain_queries %d (%.2f%%, %d ms); MariaDB counted %d from the load's end",
		coalesce.DB.Queries, coalesce.DB.DrainQueries, coalesce.DB.DrainShare*100, coalesce.Timing.DrainMS, drained)
	// the held loads that outlived the load: the 10, or on a busy machine
	// one fewer or so (once 9 at -p 4, in the suite: a held load the
	// service gave up on before the load's end counts before it)
	if drain.atLoadEnd < 0 || coalesce.DB.DrainQueries != drained || drained < 5 || drained > 10 ||
		coalesce.DB.DrainShare != result.Round4(float64(drained)/float64(coalesce.DB.Queries)) {
		t.Errorf("coalesce: db.drain_queries %d, share %g of %d; MariaDB counted %d from the load's end: want most of the 10 loads held until then (5 to 10), and the counts equal",
			coalesce.DB.DrainQueries, coalesce.DB.DrainShare, coalesce.DB.Queries, drained)
	}
	for _, g := range rep.Gates {
		a := armNamed(t, rep, g.Arm)
		if g.Measured == nil || *g.Measured != float64(a.DB.Queries) {
			t.Errorf("gate %s on %s measured %v; want db.queries, %d", g.Gate, g.Arm, g.Measured, a.DB.Queries)
		}
	}
	if len(rep.Gates) != 2 || !strings.Contains(rep.Gates[0].Gate, "db.queries") {
		t.Errorf("gates = %+v; want db.queries <= 60 checked on both arms", rep.Gates)
	}
}

// heldRows holds rows of the shop's items locked through one arm's
// progress: from its before window (its items cached, no load runs) until
// its load has ended, when it reads MariaDB's count (atLoadEnd) and lets
// the loads waiting on the rows go on, each 200 ms more, so herdbench's
// own read at the load's end, right after, counts as many.
type heldRows struct {
	m         *storetest.MariaDB
	arm       string
	ids       []int
	mu        sync.Mutex
	tx        *sql.Tx
	atLoadEnd int64
	err       error
}

func (h *heldRows) progress(pr Progress) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case pr.Name != h.arm || h.err != nil:
	case pr.Phase == PhaseBefore && h.tx == nil:
		h.tx, h.err = h.m.Root().Begin()
		for _, id := range h.ids { // one row each: a scan of the small table would lock every row
			if h.err == nil {
				_, h.err = h.tx.Exec("SELECT id FROM shop.items WHERE id = ? FOR UPDATE", id)
			}
		}
	case pr.Phase == PhaseDrain && h.tx != nil && h.atLoadEnd < 0:
		h.err = h.m.Root().QueryRow(`SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_statements_summary_by_digest
			WHERE DIGEST_TEXT LIKE '%SLEEP%FROM ` + "`items`" + `%'`).Scan(&h.atLoadEnd)
		h.err = errors.Join(h.err, h.tx.Commit())
	}
}

// conndrop on the shop's MariaDB KILLs the service user's connections at
// T: the service reconnects, and db.new_connections counts what it opened
// after T, within what performance_schema.users counted over the run.
func TestMariaDBConndrop(t *testing.T) {
	t.Parallel()
	m, svc := shopTarget(t)
	localtest.Measures(t)
	opened := func() int64 {
		t.Helper()
		var n int64
		if err := m.Root().QueryRow("SELECT COALESCE(SUM(TOTAL_CONNECTIONS), 0) FROM performance_schema.users WHERE USER = 'shop'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// items live a second, so the service queries all along, on
	// connections conndrop then kills
	p := servicePlan("conndrop", arm.Arm{Name: "short-ttl", Select: &arm.Select{Headers: map[string]string{"X-TTL": "1"}}})
	p.Rate, p.Clients, p.Timeout = 200, 40, herd.Duration(3*time.Second)
	before := opened()
	rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}})
	if err != nil {
		t.Fatal(err)
	}
	during := opened() - before
	a := rep.Arms[0]
	d, ok := a.Trigger.Detail.(*triggers.ConndropDetail)
	if !ok || d.ConnectionsReset == nil || d.User != "shop" {
		t.Fatalf("conndrop detail %#v; want the shop user's connections reset", a.Trigger.Detail)
	}
	t.Logf("conndrop: %d of shop's connections killed; %d opened after T, %d over the run; %d queries after T",
		*d.ConnectionsReset, a.DB.NewConnections, during, a.DB.Queries)
	if *d.ConnectionsReset < 1 || a.DB.NewConnections < 1 || a.DB.NewConnections > during {
		t.Errorf("killed %d, opened after T %d, over the run %d; want some killed, and reopened after T within the run's count",
			*d.ConnectionsReset, a.DB.NewConnections, during)
	}
	if a.HTTP.Errors.E5xx > a.HTTP.Requests/2 {
		t.Errorf("%d of %d requests failed with 5xx; want the service to reconnect", a.HTTP.Errors.E5xx, a.HTTP.Requests)
	}
}
