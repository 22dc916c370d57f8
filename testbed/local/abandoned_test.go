package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// A load whose client gave up runs on when detached (the default): Postgres
// completes it (pg_stat_statements) and the next request hits the cache it
// filled. Canceled, it dies with its request: Postgres completes none of
// it, the replica counts a load error, and the next request misses.
func TestAbandonedLoadsRunOnOrDieWithTheirRequest(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	for i, c := range []struct {
		mode  string
		calls int64  // item queries Postgres completed for the abandoned request
		next  string // the next request's outcome
	}{
		{replica.AbandonDetached, 1, admin.OutcomeHit},
		{replica.AbandonCanceled, 0, admin.OutcomeMiss},
	} {
		id := int64(31 + i)
		f.configure(`{"strategy":"none","query_cost":"400ms","abandoned_load":"` + c.mode + `"}`)
		f.expire(id, true)
		calls, errs := f.itemQueryCalls(), f.metric("herdbench_api_load_errors_total")
		// a client that gives up while its load runs, long before the 400
		// ms query ends: once the replica counts the load in flight, not
		// after a fixed time (on a busy machine 50 ms once passed before
		// the replica had the request, and no load began)
		ctx, cancel := context.WithCancel(context.Background())
		answered := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/items/%d", f.st.API[0], id), nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			answered <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); f.metric(admin.MetricLoadsInFlight) < 1; {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("%s: no load in flight 10 s after the request; want its load running", c.mode)
			}
			time.Sleep(5 * time.Millisecond) // polling, with the deadline above
		}
		cancel()
		if err := <-answered; err == nil {
			t.Fatalf("%s: the request was answered before its client gave up; want it given up", c.mode)
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: the request failed with %v; want its client's cancel", c.mode, err)
		}
		f.drain()
		gotCalls := f.itemQueryCalls() - calls
		gotErrs := f.metric("herdbench_api_load_errors_total") - errs
		if gotCalls != c.calls || (c.calls == 0) != (gotErrs == 1) {
			t.Errorf("%s: Postgres completed %d item queries, the replica counted %v load errors; want %d, and an error only when canceled",
				c.mode, gotCalls, gotErrs, c.calls)
		}
		if got := f.get(0, id); got != c.next {
			t.Errorf("%s: the next request was a %s; want a %s", c.mode, got, c.next)
		}
	}
}

// The pool's own counters count what a herd of abandoned loads costs it:
// with loads canceled with their request, fifteen requests at once on one
// replica of ten pooled connections give up after 300 ms. The ones that
// waited for a connection give up in the queue (canceled acquires), and
// the ones that held one lose it with their query, which pgx closes, so
// the next load opens a new connection (new conns).
func TestThePoolCountsAbandonedWaitsAndNewConnections(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	f.configure(`{"strategy":"none","query_cost":"400ms","abandoned_load":"canceled"}`)
	pool := int(replica.DefaultOptions.DBPoolSize)
	conns, waits := f.metric(admin.MetricDBNewConns), f.metric(admin.MetricDBCanceledAcquires)
	const extra = 5 // requests beyond the pool: they wait for a connection
	for i := range pool + extra {
		f.expire(int64(41+i), false)
	}
	done := make(chan struct{})
	for i := range pool + extra {
		id := int64(41 + i)
		go func() {
			defer func() { done <- struct{}{} }()
			// every query takes 400 ms: all of them are abandoned, and the
			// waits with them, unless a request arrives 300 ms after the first
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/items/%d", f.st.API[0], id), nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	for range pool + extra {
		<-done
	}
	f.drain()
	f.expire(60, false) // a miss, whatever ran before on the shared testbed
	f.get(0, 60)        // a load after the herd: the pool's connections were lost with their queries
	f.drain()
	gotWaits := f.metric(admin.MetricDBCanceledAcquires) - waits
	gotConns := f.metric(admin.MetricDBNewConns) - conns
	if gotWaits < 1 || gotWaits > extra || gotConns < 1 {
		t.Errorf("canceled acquires %v, new connections %v; want 1 to 5 waits given up in the queue (15 loads, 10 connections) and at least one connection opened again",
			gotWaits, gotConns)
	}
}
