package workers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/workers"
)

// stepJob prepares an arm of 400 req/s, 500 ms before T and 3 s after,
// with escape steps, on two workers (real HTTP servers on loopback).
func stepJob(t *testing.T, steps *load.Steps) (experiment.Prepared, time.Duration, time.Duration) {
	t.Helper()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(target.Close)
	var urls []string
	for range 2 {
		srv := httptest.NewServer(workers.NewWorker("test", nil, "").Handler())
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	const before, after = 500 * time.Millisecond, 3 * time.Second
	job := experiment.Job{Arm: "none", Cut: &load.Cut{}, Steps: steps, Before: before, After: after, Load: load.Config{Targets: []string{target.URL},
		Rate: 400, Duration: before + after, Keys: 100, Zipf: 1.1, Timeout: time.Second}}
	p, err := workers.NewController(urls, "test", nil, "").Prepare(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	return p, before, after
}

// An escape step set while two workers send reaches both: the rows
// before its instant hold the schedule's 400 req/s (40 requests a row, 39
// the first),
// those from it the step's 100 req/s (10 a row), every row of the
// stripes merged together, as one stepped schedule. The step is set as
// the escape sets it: at a row's edge, the workers' StepLead and a row
// ahead.
func TestAnEscapeStepReachesEveryWorker(t *testing.T) {
	steps := &load.Steps{}
	p, before, after := stepJob(t, steps)
	start := time.Now().Add(p.Lead())
	tt := start.Add(before)
	rec := experiment.NewRecorder(tt, before, after, false)
	lead := p.(experiment.StepLeader).StepLead(400)
	stepped := make(chan time.Time, 1)
	go func() { // once T has passed: the next edge far enough ahead
		load.SleepUntil(context.Background(), tt) // the step is set at an instant of the schedule, not on a condition
		now := time.Now()
		edge := tt.Add(now.Sub(tt).Truncate(result.RowWidth) + result.RowWidth)
		for edge.Before(now.Add(lead + result.RowWidth)) {
			edge = edge.Add(result.RowWidth)
		}
		if err := steps.Step(edge.Add(-time.Nanosecond), 100); err != nil {
			t.Error(err)
		}
		stepped <- edge
	}()
	ws, err := p.Run(context.Background(), start, tt, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	edge := <-stepped
	st := rec.State()
	stepRow, last := result.RowIndex(edge, tt), int64(after/result.RowWidth)-1
	t.Logf("step to 100 req/s at T+%s (row %d), the workers' lead %s", edge.Sub(tt), stepRow, lead)
	first := -int64(before / result.RowWidth)
	for i := first; i <= last; i++ {
		want := int64(40)
		switch {
		case i >= stepRow:
			want = 10
		case i == first:
			want = 39 // the schedule's first request is due an interval after its start
		}
		if got := st.Rows[i].Requests; got != want {
			t.Errorf("row %d (T%+dms): %d requests intended; want %d, the stepped schedule's", i, i*100, got, want)
		}
	}
	var sent int64
	for _, w := range ws.Each {
		sent += w.Load.Intended
	}
	if sent != st.Intended || st.Intended == 0 {
		t.Errorf("the workers intended %d; the controller merged %d; want every one once", sent, st.Intended)
	}
}

// A step that reaches a worker after it paced a request due past the
// step's instant is refused, and the arm fails naming the worker: its
// stripe is no longer the stepped schedule.
func TestALateStepFailsTheArm(t *testing.T) {
	steps := &load.Steps{}
	p, before, after := stepJob(t, steps)
	start := time.Now().Add(p.Lead())
	tt := start.Add(before)
	go func() {
		load.SleepUntil(context.Background(), tt) // the step is set at an instant of the schedule, not on a condition
		// 1 ms ahead: each worker paces its stripe 5 ms ahead at 400 req/s
		_ = steps.Step(time.Now().Add(time.Millisecond), 100)
	}()
	_, err := p.Run(context.Background(), start, tt, experiment.NewRecorder(tt, before, after, false), nil)
	if err == nil || !strings.Contains(err.Error(), "worker 0 (http://") || !strings.Contains(err.Error(), "the escape's step to 100 req/s") ||
		!strings.Contains(err.Error(), "late: ") {
		t.Fatalf("Run with a late step = %v; want the arm failed naming the worker and the late step", err)
	}
}
