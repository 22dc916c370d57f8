package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// An attacker starved of workers (one, against a server that takes 50 ms
// a request) cannot keep a 100 req/s schedule: the requests it sends leave
// later and later, and their latency counts from their instant on the
// schedule; what it still owes LateGrace after the window is counted
// unsent. One worker sends at most one request per 50 ms, about 31 in the
// window and its grace.
func TestStarvedAttackerCountsLateAndUnsent(t *testing.T) {
	localtest.Measures(t)
	const service = 50 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		time.Sleep(service) // the server's service time, not a readiness wait
	}))
	defer srv.Close()
	c := Config{Targets: []string{srv.URL}, Rate: 100, Duration: time.Second, Keys: 10, Zipf: 1.1, Seed: 1,
		Timeout: 5 * time.Second, MaxWorkers: 1}
	var got collect
	if _, err := Attack(context.Background(), c, got.add); err != nil {
		t.Fatal(err)
	}
	var sent, unsent int
	var worst time.Duration
	for _, r := range got.recs {
		if r.Outcome == Unsent {
			unsent++
			continue
		}
		sent++
		lag := r.Left.Sub(r.Intended)
		worst = max(worst, lag)
		if r.Outcome == OK && r.Latency < lag+service-time.Millisecond {
			t.Errorf("request %d: latency %s, lag %s; want at least the lag and the %s the server took", r.Seq, r.Latency, lag, service)
		}
	}
	t.Logf("%d sent, %d unsent, worst lag %s", sent, unsent, worst)
	if sent+unsent != 100 {
		t.Errorf("%d sent + %d unsent = %d; want 100, every request the schedule owed", sent, unsent, sent+unsent)
	}
	if sent > 40 || unsent < 60 {
		t.Errorf("%d sent, %d unsent; want at most about 31 sent by one worker at %s a request, the rest unsent", sent, unsent, service)
	}
	if worst < 500*time.Millisecond {
		t.Errorf("worst lag %s; want the last requests sent over half a second late", worst)
	}
}

// What a status means is the target's to say: by default a 503 is the
// service shedding load; a target whose 503s come from its load balancer
// (no server up) says shed_statuses: [429], and its 503s are errors.
func TestShedStatusesSayWhatA503Means(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	for _, tt := range []struct {
		shed Shedding
		want Outcome
	}{{nil, Shed}, {Shedding{429}, Error5xx}, {Shedding{429, 503}, Shed}} {
		c := Config{Targets: []string{srv.URL}, Rate: 100, Duration: 100 * time.Millisecond, Keys: 10, Zipf: 1.1, Seed: 1,
			Timeout: 5 * time.Second, ShedStatuses: tt.shed}
		var got collect
		if _, err := Attack(context.Background(), c, got.add); err != nil {
			t.Fatal(err)
		}
		for _, r := range got.recs {
			if r.Outcome != tt.want {
				t.Errorf("shed statuses %v: request %d of a 503 is %s; want %s", tt.shed, r.Seq, r.Outcome, tt.want)
				break
			}
		}
		if len(got.recs) != 10 {
			t.Errorf("shed statuses %v: %d records; want 10", tt.shed, len(got.recs))
		}
	}
}
