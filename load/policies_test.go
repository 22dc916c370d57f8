package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// TestRetriesAmplifyAndBudgetsBound: at 100% failure, N retries make N+1
// attempts per request, counted by the server itself; a 10% budget keeps
// attempts near 1.1 per request.
func TestRetriesAmplifyAndBudgetsBound(t *testing.T) {
	localtest.Measures(t)
	for _, tc := range []struct {
		policy, budget string
		lo, hi         float64 // attempts per request
	}{
		{"none", "none", 1, 1},
		{"fixed:5ms:3", "none", 4, 4},
		{"immediate:3", "10%", 1.05, 1.15},
		{"full-jitter:5ms:20ms:3", "tokens", 1, 4},
	} {
		t.Run(tc.policy+" budget "+tc.budget, func(t *testing.T) {
			var served atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				w.WriteHeader(http.StatusInternalServerError)
			}))
			defer srv.Close()
			p, err := retry.Parse(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			b, err := retry.ParseBudget(tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			var requests, attempts int64
			_, err = Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: 200, Duration: time.Second,
				Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second, Clients: 4, Retry: p, Budget: b},
				func(r Record) {
					requests++
					attempts += int64(r.Attempts)
					if r.Outcome != Error5xx {
						t.Errorf("outcome %v; want 5xx, the last attempt's", r.Outcome)
					}
				})
			if err != nil {
				t.Fatal(err)
			}
			if served.Load() != attempts {
				t.Errorf("the server received %d requests; the clients recorded %d attempts", served.Load(), attempts)
			}
			if amp := float64(attempts) / float64(requests); amp < tc.lo || amp > tc.hi {
				t.Errorf("%s, budget %s: %d attempts for %d requests = %.2f per request; want %g to %g",
					tc.policy, tc.budget, attempts, requests, amp, tc.lo, tc.hi)
			}
		})
	}
}

// TestHedging: replica a is slow and b fast. A request sent to a is copied
// to b after the hedge delay and b's answer wins; one sent to b answers
// before any hedge. When b fails instead, the clients' error rate passes
// the gate and they stop hedging.
func TestHedging(t *testing.T) {
	localtest.Measures(t)
	for _, tc := range []struct {
		name      string
		bFails    bool
		hedgedMin float64 // share of requests hedged
		hedgedMax float64
	}{
		{"slow replica: hedged to the fast one", false, 0.4, 0.6},
		// each of the 4 clients may hedge its first slow attempts, before
		// an answer of the failing replica reached it (how many depends on
		// the machine's load); after that, none
		{"failing replica: the error rate stops hedging", true, 0, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var served atomic.Int64
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				select {
				case <-time.After(300 * time.Millisecond):
				case <-r.Context().Done(): // the hedge won
				}
				w.Header().Set("X-Cache", "a")
			}))
			defer slow.Close()
			fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				if tc.bFails {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				w.Header().Set("X-Cache", "b")
			}))
			defer fast.Close()
			h, err := retry.ParseHedge("30ms:10%")
			if err != nil {
				t.Fatal(err)
			}
			var recs collect
			_, err = Attack(context.Background(), Config{Targets: []string{slow.URL, fast.URL}, Rate: 100, Duration: time.Second,
				Keys: 10, Zipf: 1.1, Seed: 1, Timeout: 2 * time.Second, Clients: 4, Hedge: h}, recs.add)
			if err != nil {
				t.Fatal(err)
			}
			var attempts, hedged, hedges int
			for _, r := range recs.recs {
				attempts += r.Attempts
				hedges += r.Hedges
				if r.Hedges > 0 {
					hedged++
					if tc.bFails && r.Seq >= 50 {
						t.Errorf("request %d hedged; want no hedge after the first failures reached every client", r.Seq)
					}
					if r.Attempts != 2 || r.Hedges != 1 {
						t.Errorf("request %d: %d attempts, %d hedges; want the attempt and one hedge", r.Seq, r.Attempts, r.Hedges)
					}
					if !tc.bFails && (r.Outcome != OK || r.Cache != "b") {
						t.Errorf("hedged request %d: %v from %q; want ok from the fast replica b", r.Seq, r.Outcome, r.Cache)
					}
				}
			}
			// every attempt the servers received the clients recorded; of a
			// hedged request, the attempt that lost is cancelled when the
			// other answers, and on a busy machine that can be before its
			// server read it (received 150 of 152 once): at most one per
			// hedge goes unseen
			if got := int(served.Load()); got > attempts || attempts-got > hedges {
				t.Errorf("the servers received %d requests; the clients recorded %d attempts, %d of them hedges; want every attempt received but at most one per hedge", got, attempts, hedges)
			}
			share := float64(hedged) / float64(len(recs.recs))
			if share < tc.hedgedMin || share > tc.hedgedMax {
				t.Errorf("%d of %d requests hedged (%.2f); want %g to %g", hedged, len(recs.recs), share, tc.hedgedMin, tc.hedgedMax)
			}
		})
	}
}

// TestClientBreaker: while the server fails, each client's breaker opens
// and refuses attempts itself, never sending them; once the server is back,
// a trial closes it and requests succeed again.
func TestClientBreaker(t *testing.T) {
	localtest.Measures(t)
	var served atomic.Int64
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	b, err := retry.ParseBreaker("3:100ms")
	if err != nil {
		t.Fatal(err)
	}
	const rate = 200
	var (
		mu                 sync.Mutex
		failing, recovered map[Outcome]int
		attempts           int
	)
	failing, recovered = map[Outcome]int{}, map[Outcome]int{}
	var healedAt atomic.Int64 // the Seq from which the server is healthy
	healedAt.Store(1 << 62)
	_, err = Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: rate, Duration: 2 * time.Second,
		Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second, Clients: 4, Breaker: b}, func(r Record) {
		mu.Lock()
		defer mu.Unlock()
		attempts += r.Attempts
		// a record reported before the server heals was answered by the
		// failing server (or refused by a breaker); one sent before but
		// reported after may have reached the healed server: neither
		wasFailing := !healthy.Load()
		if r.Seq == rate && wasFailing { // a second in
			healedAt.Store(int64(r.Seq))
			healthy.Store(true)
		}
		switch s := int64(r.Seq); {
		case wasFailing && s < healedAt.Load():
			failing[r.Outcome]++
		case s > healedAt.Load()+rate/2: // half a second to close every breaker
			recovered[r.Outcome]++
		}
		if r.Outcome == BreakerOpen && r.Attempts != 0 {
			t.Errorf("request %d refused by the client's breaker: %d attempts; want none sent", r.Seq, r.Attempts)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if int(served.Load()) != attempts {
		t.Errorf("the server received %d requests; the clients recorded %d attempts", served.Load(), attempts)
	}
	// while failing: most requests never leave the clients
	if failing[BreakerOpen] < failing[Error5xx] || failing[OK] != 0 {
		t.Errorf("while the server fails: %v; want the breakers to refuse most requests", failing)
	}
	if recovered[OK] == 0 || recovered[OK] != sum(recovered) {
		t.Errorf("after the server recovered: %v; want every request ok", recovered)
	}
}

func sum(m map[Outcome]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
