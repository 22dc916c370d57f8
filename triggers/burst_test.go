package triggers

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// burstServer counts the requests and the connections it gets.
func burstServer(t testing.TB) (srv *httptest.Server, requests, conns *atomic.Int64) {
	requests, conns = new(atomic.Int64), new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, requests, conns
}

func TestBurstReleasesEveryClient(t *testing.T) {
	srv, requests, conns := burstServer(t)
	b := &Burst{Clients: 200}
	env := Env{API: []string{srv.URL}, HotKeys: []string{"1", "2", "3"}}
	if _, err := b.Fire(context.Background(), env); err == nil {
		t.Error("Fire before Prepare = nil error; want one saying no connections are open")
	}
	if err := b.Prepare(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	// the connections are open, and nothing was sent on them yet
	deadline := time.Now().Add(5 * time.Second)
	for conns.Load() < 200 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling the server's count, with a deadline
	}
	if conns.Load() != 200 || requests.Load() != 0 {
		t.Fatalf("after Prepare: %d connections, %d requests; want 200 open and none sent", conns.Load(), requests.Load())
	}
	d, err := b.Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := d["burst"].(BurstResult)
	if !ok || res.Clients != 200 || res.OK != 200 || requests.Load() != 200 || conns.Load() != 200 {
		t.Fatalf("burst of 200 = %+v, server saw %d requests on %d connections; want 200 released and answered on the 200 open connections",
			d, requests.Load(), conns.Load())
	}
	if res.SpreadP50US <= 0 || res.SpreadP99US < res.SpreadP50US {
		t.Errorf("spread p50 %dus, p99 %dus; want 0 < p50 <= p99", res.SpreadP50US, res.SpreadP99US)
	}
}

// A burst that never fires closes the connections it opened.
func TestBurstReleaseClosesItsConnections(t *testing.T) {
	var open atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	b := &Burst{Clients: 50}
	if err := b.Prepare(context.Background(), Env{API: []string{srv.URL}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for open.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling the server's count, with a deadline
	}
	if open.Load() != 50 {
		t.Fatalf("after Prepare: %d connections open; want 50", open.Load())
	}
	b.Release()
	for open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling the server's count, with a deadline
	}
	if n := open.Load(); n != 0 {
		t.Errorf("after Release: %d connections still open; want none", n)
	}
}

// BenchmarkBurstSpread tracks how synchronized a released burst of 1,000
// clients really is on this machine: the spread of their departures.
func BenchmarkBurstSpread(b *testing.B) {
	srv, _, _ := burstServer(b)
	env := Env{API: []string{srv.URL}, HotKeys: []string{"1"}}
	var p50, p99 int64
	for b.Loop() {
		bu := &Burst{Clients: 1000}
		b.StopTimer()
		if err := bu.Prepare(context.Background(), env); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		d, err := bu.Fire(context.Background(), env)
		if err != nil {
			b.Fatal(err)
		}
		r := d["burst"].(BurstResult)
		p50, p99 = p50+r.SpreadP50US, p99+r.SpreadP99US
	}
	b.ReportMetric(float64(p50)/float64(b.N), "spread-p50-us")
	b.ReportMetric(float64(p99)/float64(b.N), "spread-p99-us")
}
