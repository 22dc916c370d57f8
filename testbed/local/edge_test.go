package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/edge"
)

// An edge replica in front of the testbed's API replicas: each layer's
// traffic, read from its own counters, is the layer above's times its
// retries. Healthy, a client request is one attempt at B and one query in
// Postgres. With Postgres cut off, every attempt fails at B and the edge's
// policy (immediate:2) sends each client request to B three times; when B
// retries its loads too (db_retry immediate:2), each of those tries the
// database three times: one client request, nine database attempts.
func TestRetriesMultiplyLayerByLayer(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	f.configure(`{"strategy":"none","query_cost":"1ms"}`)
	t.Cleanup(func() { f.configure(`{}`) }) // db_retry back to none for the next test
	pol, err := retry.Parse("immediate:2")
	if err != nil {
		t.Fatal(err)
	}
	e, err := edge.New(edge.Options{Name: "a1", Upstreams: f.st.API, Config: edge.Config{Timeout: herd.Duration(3 * time.Second), Retry: pol}})
	if err != nil {
		t.Fatal(err)
	}
	a := httptest.NewServer(e.Handler())
	defer a.Close()

	type layers struct{ clients, attempts, atB, dbAttempts, queries int64 }
	phase := func(ids []int64, wantStatus int) (l layers) {
		t.Helper()
		b0, q0 := f.metric(admin.MetricRequests), f.itemQueryCalls()
		db0 := f.metric(admin.MetricLoads) + f.metric(admin.MetricLoadErrors)
		at0 := edgeCounter(t, a.URL, edge.MetricAttempts)
		for _, id := range ids {
			f.expire(id, true) // a miss: B must load it
			resp, err := http.Get(fmt.Sprintf("%s/items/%d", a.URL, id))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != wantStatus {
				t.Fatalf("GET %d through the edge: %d %s; want %d", id, resp.StatusCode, body, wantStatus)
			}
		}
		l = layers{clients: int64(len(ids)), attempts: int64(edgeCounter(t, a.URL, edge.MetricAttempts) - at0),
			atB: int64(f.metric(admin.MetricRequests) - b0), queries: f.itemQueryCalls() - q0,
			dbAttempts: int64(f.metric(admin.MetricLoads) + f.metric(admin.MetricLoadErrors) - db0)}
		t.Logf("%+v", l)
		return l
	}
	ids := func(from int64) (out []int64) {
		for i := range int64(20) {
			out = append(out, from+i)
		}
		return out
	}

	if l := phase(ids(700), http.StatusOK); l.attempts != l.clients || l.atB != l.clients || l.dbAttempts != l.clients || l.queries != l.clients {
		t.Errorf("healthy: %+v; want one edge attempt, one request at B, one load and one item query per client request", l)
	}

	pg, err := toxiclient.NewClient(f.st.Toxiproxy).Proxy("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Disable(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Enable() })
	if l := phase(ids(800), http.StatusBadGateway); l.attempts != 3*l.clients || l.atB != l.attempts || l.dbAttempts != l.atB || l.queries != 0 {
		t.Errorf("postgres cut off: %+v; want 3 edge attempts per client request, each reaching B and trying the database once, no query completing", l)
	}

	f.configure(`{"strategy":"none","query_cost":"1ms","db_retry":"immediate:2"}`)
	if l := phase(ids(900), http.StatusBadGateway); l.attempts != 3*l.clients || l.atB != l.attempts || l.dbAttempts != 9*l.clients || l.queries != 0 {
		t.Errorf("postgres cut off, B retrying its loads: %+v; want 3 edge attempts and 9 database attempts per client request", l)
	}
	if r := f.metric(admin.MetricLoadRetries); r != 2*3*20 {
		t.Errorf("%s = %g; want 2 per request at B, %d", admin.MetricLoadRetries, r, 2*3*20)
	}
}

// edgeCounter reads a counter from an edge's /metrics, summed over its
// labels.
func edgeCounter(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	mf, ok := mfs[name]
	if !ok {
		t.Fatalf("%s/metrics has no %s", base, name)
	}
	var sum float64
	for _, m := range mf.GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// Tiers 2 puts one edge replica in front of each API replica, each calling
// them through toxiproxy proxies of their own: the status names them, an
// item comes back through an edge, disabling the api proxies cuts the
// edges from the replicas (502), and Stop leaves nothing of them.
func TestTwoTiersPutEdgesInFrontOfTheReplicas(t *testing.T) {
	requireBinaries(t)
	dir := stateDir(t)
	pol, err := retry.Parse("immediate:1")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Start(context.Background(), Config{StateDir: dir, Binary: binary, Replicas: 2, Items: 50,
		Tiers: TwoTiers, Edge: edge.Options{Config: edge.Config{Timeout: herd.Duration(2 * time.Second), Retry: pol}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Stop)
	st := tb.Status()
	if len(st.Edge) != 2 || st.PIDs["edge-1"] == 0 || st.PIDs["edge-2"] == 0 || st.Proxies["api-1"] == "" || st.Proxies["api-2"] == "" {
		t.Fatalf("status: edge %v, pids %v, proxies %v; want 2 edges, their pids and an api-N proxy per replica", st.Edge, st.PIDs, st.Proxies)
	}
	get := func(u string) (int, string) {
		resp, err := http.Get(u + "/items/42")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Edge") + " " + string(b)
	}
	for i, u := range st.Edge {
		if code, body := get(u); code != http.StatusOK || !strings.HasPrefix(body, fmt.Sprintf("edge-%d {", i+1)) || !strings.Contains(body, `"id":42`) {
			t.Errorf("GET %s/items/42 = %d %s; want item 42 through edge-%d", u, code, body, i+1)
		}
	}
	tox := toxiclient.NewClient(st.Toxiproxy)
	for _, name := range []string{"api-1", "api-2"} {
		p, err := tox.Proxy(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Disable(); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := get(st.Edge[0]); code != http.StatusBadGateway {
		t.Errorf("with the api proxies disabled, GET through edge-1 = %d %s; want 502", code, body)
	}
	if n := edgeCounter(t, st.Edge[0], edge.MetricAttempts); n != 1+2 {
		t.Errorf("edge-1 attempts = %g; want 3 (one answered, then two tries cut off)", n)
	}
	tb.Stop()
	assertGone(t, dir, statusPorts(t, st.Edge...))
}

// Deadline propagation on the real replicas: an edge that gives up on a
// slow B after 300ms and retries leaves B running three 800ms loads nobody
// waits for, and Postgres completes them all; with a 300ms deadline passed
// on to B, B's one load is canceled at it, Postgres completes none, and
// the edge does not retry past it.
func TestPropagatedDeadlineStopsWorkNobodyWaitsFor(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	f.configure(`{"strategy":"none","query_cost":"800ms"}`)
	t.Cleanup(func() { f.configure(`{}`) })
	pol, err := retry.Parse("immediate:2")
	if err != nil {
		t.Fatal(err)
	}
	idle := func() {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); f.metric(admin.MetricBusy) != 0; {
			if time.Now().After(deadline) {
				t.Fatal("the replicas' loads did not end within 10s")
			}
			time.Sleep(20 * time.Millisecond) // polling, bounded by the deadline above
		}
	}
	run := func(id int64, c edge.Config) (status int, attempts, queries, loadErrors int64) {
		t.Helper()
		e, err := edge.New(edge.Options{Name: "a1", Upstreams: f.st.API, Config: c})
		if err != nil {
			t.Fatal(err)
		}
		a := httptest.NewServer(e.Handler())
		defer a.Close()
		q0, le0 := f.itemQueryCalls(), f.metric(admin.MetricLoadErrors)
		f.expire(id, true)
		resp, err := http.Get(fmt.Sprintf("%s/items/%d", a.URL, id))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		idle()
		return resp.StatusCode, int64(edgeCounter(t, a.URL, edge.MetricAttempts)), f.itemQueryCalls() - q0, int64(f.metric(admin.MetricLoadErrors) - le0)
	}
	c := edge.Config{Timeout: herd.Duration(300 * time.Millisecond), Retry: pol}
	status, attempts, queries, _ := run(801, c)
	if status != http.StatusBadGateway || attempts != 3 || queries != 3 {
		t.Errorf("without a deadline: %d, %d attempts, %d queries completed; want 502, 3 and 3 (B finished every load nobody waited for)", status, attempts, queries)
	}
	c.Deadline = herd.Duration(300 * time.Millisecond)
	status, attempts, queries, loadErrors := run(802, c)
	if status != http.StatusGatewayTimeout || attempts != 1 || queries != 0 || loadErrors != 1 {
		t.Errorf("with a 300ms deadline: %d, %d attempts, %d queries completed, %d load errors; want 504, 1, 0 and 1 (B's load canceled at the deadline)",
			status, attempts, queries, loadErrors)
	}
}
