package workers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/workers"
)

// A cut made while two workers send passes to both: each stops sending at
// its instant, no request intended after it is merged (a bin that reached
// the controller anyway is counted in past_cut), every request a worker
// filed is merged once at the controller, and the arm ends long before its
// schedule would. The cut falls at a row's end, as the arm's own cut does
// (experiment's ending.cut).
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
	cutting := make(chan struct{})
	go func() { // a second's requests merged: cut at the end of the row under way
		defer close(cutting)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if rec.Generator(before+after).Intended >= rate {
				now := time.Now()
				cut.At(tt.Add(now.Sub(tt).Truncate(result.RowWidth) + result.RowWidth - time.Nanosecond))
				return
			}
		}
	}()
	ws, err := p.Run(ctx, start, tt, rec, nil)
	<-cutting
	if err != nil {
		t.Fatal(err)
	}
	at, ok := cut.When()
	if !ok {
		t.Fatal("no cut made: the controller never merged a second's requests")
	}
	st := rec.State()
	for i, row := range st.Rows {
		if i > result.RowIndex(at, tt) && row.Requests > 0 {
			t.Errorf("row %d: %d requests merged though intended after the cut at %s", i, row.Requests, at.Format(time.StampMicro))
		}
	}
	var sent, pastCut int64
	for _, w := range ws.Each {
		sent += w.Load.Intended
		pastCut += w.PastCut
	}
	t.Logf("cut at start+%s: %d requests merged, %d past the cut", at.Sub(start), st.Records, pastCut)
	if sent != st.Records+pastCut {
		t.Errorf("the workers filed %d requests; the controller merged %d and %d past the cut; want every one once", sent, st.Records, pastCut)
	}
	// the schedule had 21 s of requests; the cut came after about one
	if limit := int64(rate) * 5; sent >= limit {
		t.Errorf("the workers sent %d requests; want the schedule cut after about %d", sent, rate)
	}
}
