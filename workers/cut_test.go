package workers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/workers"
)

// A cut made while two workers send passes to both: each stops sending at
// its instant, no record intended after it is filed (one that reached the
// controller anyway is counted in past_cut), every record a worker filed
// is filed once at the controller, and the arm ends long before its
// schedule would.
func TestTheCutReachesEveryWorker(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(target.Close)
	var urls []string
	for range 2 {
		srv := httptest.NewServer(workers.NewWorker("test", nil, "").Handler())
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const rate, before, after = 400, time.Second, 20 * time.Second
	cut := &load.Cut{}
	job := experiment.Job{Arm: "none", Cut: cut, Before: before, After: after, Load: load.Config{Targets: []string{target.URL},
		Rate: rate, Duration: before + after, Keys: 100, Zipf: 1.1, Timeout: time.Second}}
	p, err := workers.NewController(urls, "test", nil, "").Prepare(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(p.Lead())
	tt := start.Add(before)
	rec := experiment.NewRecorder(tt, before, after, false)
	var filed atomic.Int64
	var mu sync.Mutex
	var late []time.Time // records filed though intended after the cut
	ws, err := p.Run(ctx, start, tt, rec, func(r load.Record) {
		if at, ok := cut.When(); ok && r.Intended.After(at) {
			mu.Lock()
			late = append(late, r.Intended)
			mu.Unlock()
		}
		rec.Add(r)
		if filed.Add(1) == rate { // a second's records in: cut now
			cut.At(time.Now())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	at, _ := cut.When()
	if len(late) > 0 {
		t.Errorf("%d records filed though intended after the cut at %s, the first %s", len(late), at.Format(time.StampMicro), late[0].Format(time.StampMicro))
	}
	var sent, pastCut int64
	for _, w := range ws.Each {
		sent += w.Load.Intended
		pastCut += w.PastCut
	}
	t.Logf("cut at start+%s: %d records filed, %d past the cut", at.Sub(start), filed.Load(), pastCut)
	if sent != filed.Load()+pastCut {
		t.Errorf("the workers filed %d records; the controller %d and %d past the cut; want every one once", sent, filed.Load(), pastCut)
	}
	// the schedule had 21 s of requests; the cut came after about one
	if limit := int64(rate) * 5; sent >= limit {
		t.Errorf("the workers sent %d requests; want the schedule cut after about %d", sent, rate)
	}
}
