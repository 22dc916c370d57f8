package load

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A stepped schedule is a function of the request's number: at 100 req/s
// from start, stepped to 50 req/s at 500 ms and to 10 req/s at 1 s,
// requests 0..49 are due every 10 ms up to 500 ms, 50..74 every 20 ms up
// to 1 s, and 75 on every 100 ms.
func TestStepsDue(t *testing.T) {
	start := time.Unix(1000, 0)
	ms := time.Millisecond
	var st Steps
	for _, s := range []Stepped{{start.Add(500 * ms), 50}, {start.Add(time.Second), 10}} {
		if err := st.Step(s.At, s.Rate); err != nil {
			t.Fatal(err)
		}
	}
	s := newSchedule(Config{Rate: 100, Duration: 2 * time.Second, Steps: &st}, start)
	for _, tt := range []struct {
		k    uint64
		want time.Duration
	}{{0, 10 * ms}, {48, 490 * ms}, {49, 500 * ms}, {50, 520 * ms}, {74, 1000 * ms}, {75, 1100 * ms}, {84, 2000 * ms}} {
		if got := s.due(tt.k).Sub(start); got != tt.want {
			t.Errorf("due(%d) = %s; want %s", tt.k, got, tt.want)
		}
	}
	// vegeta's pacer waits for each hit's instant on the stepped schedule,
	// and stops past the window
	for _, tt := range []struct {
		now  time.Duration
		hits uint64
		wait time.Duration
		stop bool
	}{{now: 495 * ms, hits: 49, wait: 5 * ms}, {now: 505 * ms, hits: 50, wait: 15 * ms}, {now: 1050 * ms, hits: 75, wait: 50 * ms},
		{now: 1990 * ms, hits: 85, stop: true}} {
		s.now = func() time.Time { return start.Add(tt.now) }
		wait, stop := s.Pace(0, tt.hits)
		if stop != tt.stop || (!stop && wait != tt.wait) {
			t.Errorf("Pace(%d) at %s = (%s, %t); want (%s, %t)", tt.hits, tt.now, wait, stop, tt.wait, tt.stop)
		}
	}
	for _, tt := range []struct {
		elapsed time.Duration
		want    float64
	}{{0, 100}, {499 * ms, 100}, {500 * ms, 50}, {1500 * ms, 10}} {
		if got := s.Rate(tt.elapsed); got != tt.want {
			t.Errorf("Rate(%s) = %g; want %g", tt.elapsed, got, tt.want)
		}
	}
}

// A step's instant must follow the last one's, and its rate be a number
// above 0.
func TestStepRefuses(t *testing.T) {
	at := time.Unix(1000, 0)
	var st Steps
	if err := st.Step(at, 50); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		at   time.Time
		rate float64
	}{{"same instant", at, 10}, {"earlier", at.Add(-time.Second), 10}, {"zero rate", at.Add(time.Second), 0},
		{"negative", at.Add(time.Second), -1}, {"NaN", at.Add(time.Second), math.NaN()}} {
		if err := st.Step(tt.at, tt.rate); err == nil {
			t.Errorf("%s: Step(%s, %g) = nil; want an error", tt.name, tt.at, tt.rate)
		}
	}
	if n := len(st.List()); n != 1 {
		t.Errorf("%d steps after refusals; want 1", n)
	}
}

// Added is closed by the next step set, not by a refused one, and a new
// one is taken for the step after: what passes the steps on to workers.
func TestAddedSaysAStepWasSet(t *testing.T) {
	var st Steps
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	at := time.Unix(1000, 0)
	added := st.Added()
	if err := st.Step(at, 0); err == nil || closed(added) {
		t.Fatalf("a refused step: Step = %v, Added closed %v; want an error, and Added open", err, closed(added))
	}
	if err := st.Step(at, 50); err != nil || !closed(added) {
		t.Fatalf("Step(%s, 50) = %v, Added closed %v; want nil, and Added closed", at, err, closed(added))
	}
	if next := st.Added(); closed(next) {
		t.Error("Added after a step is closed already; want open until the next")
	}
	if (*Steps)(nil).Added() != nil {
		t.Error("a nil Steps' Added is not nil; want never")
	}
}

// vegeta's attacker sends a stepped schedule: every record's intended
// instant is the schedule's for its number, and the requests fall in
// each step as its rate says (200 req/s for 300 ms, then 50 req/s for
// 300 ms: 60 and 15).
func TestAttackSendsAStepDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	start := time.Now().Add(50 * time.Millisecond)
	var st Steps
	if err := st.Step(start.Add(300*time.Millisecond), 50); err != nil {
		t.Fatal(err)
	}
	c := Config{Targets: []string{srv.URL}, Rate: 200, Duration: 600 * time.Millisecond, Keys: 10, Zipf: 1.1, Seed: 1,
		Timeout: 5 * time.Second, Start: start, Steps: &st}
	var got collect
	if _, err := Attack(context.Background(), c, got.add); err != nil {
		t.Fatal(err)
	}
	s := newSchedule(c, start)
	var first, second int
	for _, r := range got.recs {
		if want := s.due(r.Seq); !r.Intended.Equal(want) {
			t.Errorf("request %d intended at %s; want %s", r.Seq, r.Intended.Sub(start), want.Sub(start))
		}
		if r.Intended.Sub(start) <= 300*time.Millisecond {
			first++
		} else {
			second++
		}
	}
	if first != 60 || second != 15 {
		t.Errorf("%d requests in the first 300 ms, %d in the next; want 60 and 15", first, second)
	}
}
