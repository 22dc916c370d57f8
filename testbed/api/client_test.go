package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func TestCountersGrown(t *testing.T) {
	prev := Counters{Loads: 10, Coalesced: 5, LoadsInFlight: 3, Busy: 6}
	cur := Counters{Loads: 14, Coalesced: 2, LoadsInFlight: 1, Busy: 2}
	got := cur.Grown(prev)
	// loads grew by 4; coalesced went down, so its replica restarted and
	// counted 2 since; the gauges are now's
	if want := (Counters{Loads: 4, Coalesced: 2, LoadsInFlight: 1, Busy: 2}); got != want {
		t.Errorf("%+v.Grown(%+v) = %+v; want %+v", cur, prev, got, want)
	}
	if got, want := prev.Plus(cur), (Counters{Loads: 24, Coalesced: 7, LoadsInFlight: 4, Busy: 8}); got != want {
		t.Errorf("Plus = %+v; want %+v", got, want)
	}
}

// The client reads the counters by the names the server registers: a
// rename on one side shows here as a zero.
func TestClientReadsTheServersCounters(t *testing.T) {
	var inFlight, busy atomic.Int64
	m := newMetrics(DefaultMitigations(), gauges{loads: &inFlight, busy: &busy, shedLimit: func() float64 { return 0 }})
	m.loads.Add(7)
	m.coalesced.Add(2)
	m.staleServed.Add(3)
	m.lockWaits.Add(4)
	m.loadErrors.Add(5)
	m.earlyLoads.Add(6)
	inFlight.Store(1)
	busy.Store(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer srv.Close()
	f := NewFleet([]string{srv.URL, srv.URL})
	got, err := f.Counters(context.Background())
	want := Counters{Loads: 14, LoadErrors: 10, EarlyLoads: 12, Coalesced: 4, StaleServed: 6, LockWaits: 8, LoadsInFlight: 2, Busy: 6}
	if err != nil || got != want {
		t.Errorf("Fleet.Counters = %+v, %v; want %+v (two replicas, summed)", got, err, want)
	}
}
