package triggers

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	armed, err := b.Prepare(context.Background(), env)
	if err != nil {
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
	d, err := armed.Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if d.Burst == nil {
		t.Fatalf("Fire = %+v; want the release's spread", d)
	}
	res := *d.Burst
	if res.Clients != 200 || res.OK != 200 || requests.Load() != 200 || conns.Load() != 200 {
		t.Fatalf("burst of 200 = %+v, server saw %d requests on %d connections; want 200 released and answered on the 200 open connections",
			d, requests.Load(), conns.Load())
	}
	if res.SpreadP50US <= 0 || res.SpreadP99US < res.SpreadP50US {
		t.Errorf("spread p50 %dus, p99 %dus; want 0 < p50 <= p99", res.SpreadP50US, res.SpreadP99US)
	}
}

// Each client sends the request the target builds for its hot key, as
// serialized before T; an answer other than 200 is not ok.
func TestBurstSendsEachClientsOwnRequest(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path+" "+r.Header.Get("X-Arm")]++
		mu.Unlock()
		if r.URL.Path == "/items/3" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	env := Env{API: []string{srv.URL, srv.URL}, HotKeys: []string{"1", "2", "3"},
		Request: func(ctx context.Context, base, key string) (*http.Request, error) {
			req, err := ItemRequest(ctx, base, key)
			if err == nil {
				req.Header.Set("X-Arm", "lock")
			}
			return req, err
		}}
	d, err := (&Burst{Clients: 30}).Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"/items/1 lock": 10, "/items/2 lock": 10, "/items/3 lock": 10}
	if !maps.Equal(paths, want) || d.Burst.OK != 20 {
		t.Errorf("server saw %v, burst ok %d; want %v, and the 10 answered 503 not ok", paths, d.Burst.OK, want)
	}
}

// A burst larger than the connections this process may open is refused
// before the run, saying how many it may open.
func TestBurstKeepsToTheFileLimit(t *testing.T) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Skip(err)
	}
	low := l
	low.Cur = 1024
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	errs := (&Burst{Clients: 1000}).Validate()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "burst: 1000 clients need as many connections, and this process may open 1024 files (accepted: up to 512 here") {
		t.Errorf("Validate under a limit of 1024 files = %v; want the limit and what fits", errs)
	}
	if errs := (&Burst{Clients: 500}).Validate(); len(errs) != 0 {
		t.Errorf("Validate of 500 clients under 1024 files = %v; want none", errs)
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
	armed, err := b.Prepare(context.Background(), Env{API: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for open.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling the server's count, with a deadline
	}
	if open.Load() != 50 {
		t.Fatalf("after Prepare: %d connections open; want 50", open.Load())
	}
	armed.Close()
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
		armed, err := bu.Prepare(context.Background(), env)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		d, err := armed.Fire(context.Background(), env)
		if err != nil {
			b.Fatal(err)
		}
		r := *d.Burst
		p50, p99 = p50+r.SpreadP50US, p99+r.SpreadP99US
	}
	b.ReportMetric(float64(p50)/float64(b.N), "spread-p50-us")
	b.ReportMetric(float64(p99)/float64(b.N), "spread-p99-us")
}

// Bursts released by several workers merge into the burst of all their
// clients: counts add up, and the spread is over every departure.
func TestMergeBurstsIsTheUnionsBurst(t *testing.T) {
	var all []time.Duration
	var parts []*BurstResult
	for w := range 3 {
		var left []time.Duration
		for i := range 100 {
			left = append(left, time.Duration((w+1)*(i+1))*time.Microsecond)
		}
		all = append(all, left...)
		parts = append(parts, NewBurstResult(100, 99, left))
	}
	got, want := MergeBursts(parts), NewBurstResult(300, 297, all)
	if got.Clients != 300 || got.OK != 297 || got.SpreadP50US != want.SpreadP50US || got.SpreadP99US != want.SpreadP99US {
		t.Errorf("merged: %d clients, %d ok, spread p50 %dus p99 %dus; want 300, 297, %dus, %dus (the union's)",
			got.Clients, got.OK, got.SpreadP50US, got.SpreadP99US, want.SpreadP50US, want.SpreadP99US)
	}
	if want.SpreadP99US != 294 { // the 298th of 300 sorted departures: 3µs x 98
		t.Errorf("union's p99 %dus; want 294us (the test's own data)", want.SpreadP99US)
	}
}
