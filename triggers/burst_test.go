package triggers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func burstServer(t testing.TB) (*httptest.Server, *atomic.Int64) {
	var items atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			items.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &items
}

func TestBurstReleasesEveryClient(t *testing.T) {
	srv, items := burstServer(t)
	b := &Burst{Clients: 200}
	env := Env{API: []string{srv.URL}, HotKeys: []int64{1, 2, 3}}
	if _, err := b.Fire(context.Background(), env); err == nil {
		t.Error("Fire before Prepare = nil error; want one saying no connections are open")
	}
	if err := b.Prepare(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	d, err := b.Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := d["burst"].(BurstResult)
	if !ok || res.Clients != 200 || res.OK != 200 || items.Load() != 200 {
		t.Fatalf("burst of 200 = %+v, server saw %d item requests; want 200 released, answered and received", d, items.Load())
	}
	if res.SpreadP50US <= 0 || res.SpreadP99US < res.SpreadP50US {
		t.Errorf("spread p50 %dus, p99 %dus; want 0 < p50 <= p99", res.SpreadP50US, res.SpreadP99US)
	}
}

// BenchmarkBurstSpread tracks how synchronized a released burst of 1,000
// clients really is on this machine: the spread of their departures.
func BenchmarkBurstSpread(b *testing.B) {
	srv, _ := burstServer(b)
	env := Env{API: []string{srv.URL}, HotKeys: []int64{1}}
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
