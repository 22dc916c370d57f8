package workers

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
)

// serve serves h on a new loopback listener until the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// Three workers, each a real HTTP server on loopback, send one arm to a
// service on loopback that answers in 1 to 30 ms (one in ten a 503): the
// arm's recorder, merged from their bins, equals one recorder fed every
// request each worker filed (counts, rows, histograms), and its p50, p99
// and max are within experiment.LatencyBound of the exact ones, read from
// every request's latency.
func TestBinsOfThreeWorkersAreExact(t *testing.T) {
	const seed = 5
	t.Logf("seed %d", seed)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0))
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d, fail := time.Duration(1+rng.IntN(30))*time.Millisecond, rng.IntN(10) == 0
		mu.Unlock()
		time.Sleep(d) // the service's own time
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	one := struct {
		sync.Mutex
		recs []load.Record
	}{}
	var urls []string
	for range 3 {
		w := NewWorker("test", nil, "")
		w.tap = func(r load.Record) {
			one.Lock()
			one.recs = append(one.recs, r)
			one.Unlock()
		}
		urls = append(urls, serve(t, w.Handler()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const rate, before, after = 300, time.Second, 2 * time.Second
	job := experiment.Job{Arm: "none", Before: before, After: after, Load: load.Config{Targets: []string{target},
		Rate: rate, Duration: before + after, Keys: 100, Zipf: 1.1, Timeout: time.Second}}
	p, err := NewController(urls, "test", nil, "").Prepare(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(p.Lead())
	tt := start.Add(before)
	rec := experiment.NewRecorder(tt, before, after, false)
	if _, err := p.Run(ctx, start, tt, rec, nil); err != nil {
		t.Fatal(err) // Run holds the bins to the workers' own recorders too
	}
	whole := experiment.NewRecorder(tt, before, after, false)
	var exact []int64 // µs, as recorded, of the requests from T
	for _, r := range one.recs {
		whole.Add(r)
		if r.Outcome != load.Unsent && !r.Intended.Before(tt) && r.Intended.Before(tt.Add(after)) {
			exact = append(exact, min(max(r.Latency.Microseconds(), 1), 60_000_000))
		}
	}
	if err := rec.SameCounts(whole); err != nil {
		t.Errorf("the arm's recorder against one fed every record: %v", err)
	}
	st := rec.State()
	t.Logf("%d requests merged from bins, %d filed by the workers, %d from T", st.Records, len(one.recs), len(exact))
	if want := int64(rate * (before + after) / time.Second); st.Intended < want-3 || st.Intended > want+3 {
		t.Errorf("%d intended in the window; want the plan's %d", st.Intended, want)
	}
	slices.Sort(exact)
	got := rec.HTTPFigures()
	for _, c := range []struct {
		name string
		q    float64
		ms   float64
	}{{"p50", 50, got.P50MS}, {"p99", 99, got.P99MS}, {"max", 100, got.MaxMS}} {
		want := float64(exact[max(int(math.Ceil(c.q/100*float64(len(exact))))-1, 0)]) / 1000
		// the results round to a hundredth of a ms: 0.005 ms more
		if d := math.Abs(c.ms - want); d > want*experiment.LatencyBound+0.005 {
			t.Errorf("%s: %gms from the bins, %gms exact: off by %g; want within %g", c.name, c.ms, want, d, want*experiment.LatencyBound)
		}
	}
}
