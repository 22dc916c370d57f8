package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/localtest"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		code int
		err  string
		want Outcome
	}{
		{"200", 200, "", OK},
		{"204", 204, "", OK},
		{"client timeout", 0, `Get "http://x": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, Timeout},
		{"header timeout", 0, "net/http: timeout awaiting response headers", Timeout},
		{"refused", 0, "dial tcp 127.0.0.1:1: connect: connection refused", Conn},
		{"reset", 0, "read: connection reset by peer", Conn},
		{"eof", 0, "EOF", Conn},
		{"500", 500, "", Error5xx},
		{"502", 502, "", Error5xx},
		{"503", 503, "", Shed},
		{"429", 429, "", Shed},
		{"404", 404, "", Other},
		{"301", 301, "", Other},
		{"throttled", 0, errThrottled.Error(), Throttled},
		{"client breaker", 0, `Get "http://x": ` + errBreakerOpen.Error(), BreakerOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.code, tt.err); got != tt.want {
				t.Errorf("Classify(%d, %q) = %v; want %v", tt.code, tt.err, got, tt.want)
			}
		})
	}

	t.Run("names", func(t *testing.T) {
		if len(Outcomes) != int(NumOutcomes) {
			t.Errorf("len(Outcomes) = %d; want %d", len(Outcomes), NumOutcomes)
		}
		seen := map[string]Outcome{}
		for _, o := range Outcomes {
			s := o.String()
			if s == "" {
				t.Errorf("Outcome(%d).String() = %q; want a name", o, s)
			}
			if prev, dup := seen[s]; dup {
				t.Errorf("Outcome(%d).String() = %q; want a name distinct from Outcome(%d)'s", o, s, prev)
			}
			seen[s] = o
		}
	})
}

func TestKeys(t *testing.T) {
	const n = 1000

	t.Run("same seed, same sequence", func(t *testing.T) {
		a, b := NewKeys(n, 1.1, 42), NewKeys(n, 1.1, 42)
		for i := range 1000 {
			if x, y := a.Next(), b.Next(); x != y {
				t.Fatalf("draw %d: NewKeys(%d, 1.1, 42).Next() = %d and %d; want equal", i, n, x, y)
			}
		}
	})

	t.Run("within range", func(t *testing.T) {
		for _, tc := range []struct {
			n int
			s float64
		}{{1, 1.1}, {2, 1.1}, {n, 1.1}, {n, 2}} {
			k := NewKeys(tc.n, tc.s, 7)
			for range 10000 {
				if id := k.Next(); id < 1 || id > int64(tc.n) {
					t.Fatalf("NewKeys(%d, %g, 7).Next() = %d; want within [1, %d]", tc.n, tc.s, id, tc.n)
				}
			}
		}
	})

	t.Run("zipf order", func(t *testing.T) {
		k := NewKeys(n, 1.1, 1)
		counts := make([]int, n+1)
		for range 100000 {
			counts[k.Next()]++
		}
		for _, pair := range [][2]int{{1, 2}, {2, 10}} {
			hi, lo := pair[0], pair[1]
			if counts[hi] <= counts[lo] {
				t.Errorf("draws of id %d = %d, of id %d = %d; want id %d drawn more often", hi, counts[hi], lo, counts[lo], hi)
			}
		}
	})

	t.Run("different seed, different sequence", func(t *testing.T) {
		a, b := NewKeys(n, 1.1, 1), NewKeys(n, 1.1, 2)
		same := 0
		const draws = 1000
		for range draws {
			if a.Next() == b.Next() {
				same++
			}
		}
		if same == draws {
			t.Errorf("NewKeys(%d, 1.1, 1) and NewKeys(%d, 1.1, 2) drew the same %d ids; want different sequences", n, n, draws)
		}
	})
}

func TestValidate(t *testing.T) {
	valid := Config{Targets: []string{"http://x"}, Rate: 1, Duration: time.Second, Keys: 1, Zipf: 1.1, Timeout: time.Second}
	if err := valid.Validate(); err != nil {
		t.Errorf("%+v.Validate() = %v; want nil", valid, err)
	}

	err := Config{}.Validate()
	if err == nil {
		t.Fatal("Config{}.Validate() = nil; want an error naming every field")
	}
	for _, field := range []string{"targets", "rate", "keys", "zipf", "duration", "timeout"} {
		t.Run(field, func(t *testing.T) {
			if !strings.Contains(err.Error(), field+":") {
				t.Errorf("Config{}.Validate() = %q; want it to name %s", err, field)
			}
		})
	}
}

// collect is a record callback that keeps every Record.
type collect struct {
	mu   sync.Mutex
	recs []Record
}

func (c *collect) add(r Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
}

func TestAttackOutcomesAddUp(t *testing.T) {
	localtest.Measures(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%5 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("X-Cache", "hit")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	c := Config{Targets: []string{srv.URL, srv.URL}, Rate: 200, Duration: time.Second,
		Keys: 100, Zipf: 1.1, Seed: 1, Timeout: 5 * time.Second}
	var got collect
	if _, err := Attack(context.Background(), c, got.add); err != nil {
		t.Fatalf("Attack(%+v) = %v; want nil", c, err)
	}
	recs := got.recs

	if len(recs) != 200 {
		t.Errorf("Attack at 200/s for 1s: %d records; want 200, one per intended request", len(recs))
	}
	counts := map[Outcome]int{}
	seqs := map[uint64]bool{}
	for _, r := range recs {
		counts[r.Outcome]++
		if seqs[r.Seq] {
			t.Errorf("Seq %d seen twice; want distinct", r.Seq)
		}
		seqs[r.Seq] = true
		if want := Classify(r.Code, ""); r.Outcome != want {
			t.Errorf("record %d: Outcome = %v for code %d; want %v", r.Seq, r.Outcome, r.Code, want)
		}
		if r.Outcome == OK && r.Cache != "hit" {
			t.Errorf("record %d: Cache = %q; want %q", r.Seq, r.Cache, "hit")
		}
	}
	sum := 0
	for _, o := range Outcomes {
		sum += counts[o]
	}
	if sum != len(recs) {
		t.Errorf("sum of per-outcome counts = %d; want %d (one outcome per record)", sum, len(recs))
	}
	if len(recs) > 0 {
		shed := float64(counts[Shed]) / float64(len(recs))
		if shed < 0.15 || shed > 0.25 {
			t.Errorf("shed share = %.3f (%d of %d); want within [0.15, 0.25]", shed, counts[Shed], len(recs))
		}
		if counts[OK]+counts[Shed] != len(recs) {
			t.Errorf("ok + shed = %d; want %d (the server answers nothing else): %v", counts[OK]+counts[Shed], len(recs), counts)
		}
	}
}

// Every request the schedule owed has a record: what the generator sent,
// and what it never sent because it could not keep up. A rate no machine
// reaches through net/http from one process leaves most unsent; a modest
// one leaves none, and its requests leave on time.
func TestEveryIntendedRequestIsCounted(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, tt := range []struct {
		rate      int
		duration  time.Duration
		saturated bool
	}{{200, time.Second, false}, {1_000_000, 300 * time.Millisecond, true}} {
		c := Config{Targets: []string{srv.URL}, Rate: tt.rate, Duration: tt.duration, Keys: 10, Zipf: 1.1, Seed: 1,
			Timeout: 5 * time.Second, Clients: 10}
		var got collect
		start, err := Attack(context.Background(), c, got.add)
		if err != nil {
			t.Fatal(err)
		}
		interval := time.Second / time.Duration(tt.rate)
		intended := int(tt.duration / interval)
		var unsent int
		lags := make([]time.Duration, 0, len(got.recs))
		seqs := make([]bool, intended)
		for _, r := range got.recs {
			if int(r.Seq) >= intended || seqs[r.Seq] {
				t.Fatalf("rate %d: record Seq %d out of [0, %d) or twice", tt.rate, r.Seq, intended)
			}
			seqs[r.Seq] = true
			if want := start.Add(time.Duration(r.Seq+1) * interval); !r.Intended.Equal(want) {
				t.Fatalf("rate %d: record %d intended at %v; want %v, its place in the schedule", tt.rate, r.Seq, r.Intended.Sub(start), want.Sub(start))
			}
			if r.Outcome == Unsent {
				unsent++
				if !r.Left.IsZero() || r.Attempts != 0 || r.Latency != 0 {
					t.Fatalf("rate %d: unsent record %+v; want it to have left never, with no attempt and no latency", tt.rate, r)
				}
				continue
			}
			lags = append(lags, r.Left.Sub(r.Intended))
		}
		if len(got.recs) != intended {
			t.Errorf("rate %d for %s: %d records; want %d, one per intended request", tt.rate, tt.duration, len(got.recs), intended)
		}
		slices.Sort(lags)
		var p90, p99 time.Duration
		if len(lags) > 0 {
			p90, p99 = lags[len(lags)*90/100], lags[len(lags)*99/100]
		}
		t.Logf("rate %d for %s: %d intended, %d unsent, lag p90 %s p99 %s", tt.rate, tt.duration, intended, unsent, p90, p99)
		if tt.saturated && float64(unsent) < 0.01*float64(intended) {
			t.Errorf("rate %d: %d of %d unsent; want the generator to fall behind and say so", tt.rate, unsent, intended)
		}
		// not saturated by the results' own rule (experiment.SaturatedLag):
		// every request sent, nine in ten within 10 ms of their instant. Its
		// p99, two requests of 200 here, once took 13.5 ms on a CI machine
		// compiling beside the test.
		if !tt.saturated && (unsent != 0 || p90 > 10*time.Millisecond) {
			t.Errorf("rate %d: %d unsent, lag p90 %s; want every request sent, nine in ten on time", tt.rate, unsent, p90)
		}
	}
}

// TestNoCoordinatedOmission stalls the server for a second with a single
// worker, so the generator itself is held up: requests due during the stall
// are sent late, and their latency must count from when they were due.
func TestNoCoordinatedOmission(t *testing.T) {
	localtest.Measures(t)
	const stall = time.Second
	testStart := time.Now()
	var (
		stalled              atomic.Bool
		stallBegan, stallEnd atomic.Pointer[time.Time]
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(testStart) >= time.Second && stalled.CompareAndSwap(false, true) {
			began := time.Now()
			stallBegan.Store(&began)
			time.Sleep(stall) // the server stall under test, not a readiness wait
			end := time.Now()
			stallEnd.Store(&end)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	c := Config{Targets: []string{srv.URL}, Rate: 100, Duration: 3 * time.Second,
		Keys: 100, Zipf: 1.1, Seed: 1, Timeout: 5 * time.Second, MaxWorkers: 1}
	var got collect
	start, err := Attack(context.Background(), c, got.add)
	if err != nil {
		t.Fatalf("Attack(%+v) = %v; want nil", c, err)
	}
	if !stalled.Load() {
		t.Fatal("the server never stalled")
	}
	recs := got.recs

	var slow int
	var maxLat time.Duration
	for _, r := range recs {
		if r.Outcome != OK {
			t.Errorf("record %d: Outcome = %v (code %d); want ok", r.Seq, r.Outcome, r.Code)
		}
		if r.Latency >= 500*time.Millisecond {
			slow++
		}
		maxLat = max(maxLat, r.Latency)
	}
	// About 50 requests were due in the first half of the stall. Measured
	// from the actual send, only the stalled request would be this slow.
	if slow < 40 {
		t.Errorf("records with Latency >= 500ms = %d of %d; want at least 40", slow, len(recs))
	}
	if maxLat < 900*time.Millisecond {
		t.Errorf("max Latency = %v; want at least 900ms", maxLat)
	}

	// Within the stall, latency falls linearly with the intended time: each
	// request waited from when it was due until the stall ended.
	began := stallBegan.Load().Sub(start)
	nearest := func(off time.Duration) Record {
		var best Record
		bestD := time.Duration(1<<63 - 1)
		for _, r := range recs {
			d := r.Intended.Sub(start) - off
			if d < 0 {
				d = -d
			}
			if d < bestD {
				best, bestD = r, d
			}
		}
		return best
	}
	tests := []struct {
		into     time.Duration // after the stall began
		min, max time.Duration // latency
	}{
		{200 * time.Millisecond, 650 * time.Millisecond, 1000 * time.Millisecond},
		{700 * time.Millisecond, 150 * time.Millisecond, 500 * time.Millisecond},
	}
	var lats []time.Duration
	for _, tt := range tests {
		r := nearest(began + tt.into)
		lats = append(lats, r.Latency)
		if r.Latency < tt.min || r.Latency > tt.max {
			t.Errorf("Latency of the record due %v into the stall (seq %d, due at %v) = %v; want within [%v, %v]",
				tt.into, r.Seq, r.Intended.Sub(start), r.Latency, tt.min, tt.max)
		}
	}
	if lats[0] <= lats[1] {
		t.Errorf("Latency due 200ms into the stall = %v, due 700ms into it = %v; want the earlier one larger", lats[0], lats[1])
	}

	// Every request due during the stall ended just after it: intended +
	// latency is its end, which the stall held back.
	end := *stallEnd.Load()
	var inStall int
	for _, r := range recs {
		off := r.Intended.Sub(start)
		if off <= began+20*time.Millisecond || off >= began+stall-20*time.Millisecond {
			continue
		}
		inStall++
		if got := r.Intended.Add(r.Latency); got.Before(end) || got.After(end.Add(250*time.Millisecond)) {
			t.Errorf("record %d due %v: Intended + Latency = stall end %+v; want within [0, 250ms] of it",
				r.Seq, off, got.Sub(end))
		}
	}
	if inStall < 80 {
		t.Errorf("records due inside the stall = %d; want at least 80 (100/s for 1s)", inStall)
	}
}

// TestIntendedTimeFollowsThePacer: vegeta's constant pacer sends hit k at
// (k+1)/rate. Against a server that answers at once, latency from the
// intended time is then close to zero; counted from k/rate instead, every
// request would carry a whole interval (100ms at 10/s).
func TestIntendedTimeFollowsThePacer(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var lats []time.Duration
	_, err := Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: 10, Duration: 1050 * time.Millisecond,
		Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second}, func(r Record) { lats = append(lats, r.Latency) })
	if err != nil {
		t.Fatal(err)
	}
	if len(lats) < 9 {
		t.Fatalf("got %d records at 10/s for 1s; want about 10", len(lats))
	}
	if m := slices.Min(lats); m > 50*time.Millisecond {
		t.Errorf("smallest latency from intended time = %v against an instant server at 10/s; want well under the 100ms interval", m)
	}
}

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
			var attempts, hedged int
			for _, r := range recs.recs {
				attempts += r.Attempts
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
			// every hedge is a request the servers received
			if int(served.Load()) != attempts {
				t.Errorf("the servers received %d requests; the clients recorded %d attempts", served.Load(), attempts)
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

// A target file's request template: the key in the path, a query value
// and a header; the target's and the arm's headers and query values on
// every request; and the herd's own request id never reaching the service.
func TestRequestTemplate(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
	}))
	defer srv.Close()
	keys := []string{"a/b", "c d", "e"}
	c := Config{Targets: []string{srv.URL + "/"}, Rate: 100, Duration: 300 * time.Millisecond, Timeout: time.Second, Seed: 1,
		Source:  NewListKeys(keys, 1),
		Request: Request{Method: http.MethodPost, Path: "/v1/things/{key}", Query: map[string]string{"id": "{key}"}, Headers: map[string]string{"X-Key": "k-{key}"}},
		Header:  http.Header{"Authorization": []string{"Bearer s3cret"}},
		Query:   url.Values{"arm": []string{"lock"}},
	}
	var recs collect
	if _, err := Attack(context.Background(), c, recs.add); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || len(seen) != len(recs.recs) {
		t.Fatalf("the server saw %d requests, the client recorded %d", len(seen), len(recs.recs))
	}
	for _, r := range recs.recs {
		if r.Attempts != 1 || r.Outcome != OK {
			t.Errorf("record %d: %d attempts, %v; want 1, ok (the request's id found its attempts)", r.Seq, r.Attempts, r.Outcome)
		}
	}
	for _, r := range seen {
		key := r.URL.Query().Get("id")
		if !slices.Contains(keys, key) || r.Method != http.MethodPost || r.URL.Path != "/v1/things/"+key ||
			r.Header.Get("X-Key") != "k-"+key || r.Header.Get("Authorization") != "Bearer s3cret" || r.URL.Query().Get("arm") != "lock" {
			t.Fatalf("request %s %s %v; want POST /v1/things/KEY?id=KEY&arm=lock with X-Key k-KEY and the Authorization header", r.Method, r.URL, r.Header)
		}
	}
}

// A redirect is the answer, not a hop: the load never reaches a host the
// plan did not name, nor sends it the plan's headers.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/login", http.StatusFound))
	defer srv.Close()
	var recs collect
	_, err := Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: 100, Duration: 200 * time.Millisecond,
		Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second, Header: http.Header{"Authorization": []string{"Bearer s3cret"}}}, recs.add)
	if err != nil {
		t.Fatal(err)
	}
	if elsewhere.Load() != 0 {
		t.Errorf("the redirect's target received %d requests; want none", elsewhere.Load())
	}
	for _, r := range recs.recs {
		if r.Outcome != Other || r.Code != http.StatusFound {
			t.Fatalf("request %d: %v, %d; want the redirect as the answer (other, 302)", r.Seq, r.Outcome, r.Code)
		}
	}
}

// urlFunc, the targeter's prepared URL, makes the same URL as Request.URL.
func TestURLFunc(t *testing.T) {
	extra := url.Values{"arm": []string{"lock"}, "b": []string{"1", "2"}}
	for _, r := range []Request{
		{},
		{Path: "/v1/things/{key}/x"},
		{Path: "/static"},
		{Path: "/a/{key}/{key}"},
		{Query: map[string]string{"id": "{key}"}},
		{Path: "/p/{key}", Query: map[string]string{"z": "fixed", "a": "v w"}},
		{Headers: map[string]string{"X-Key": "{key}"}},
	} {
		for _, base := range []string{"http://h:1", "http://h:1/", "http://h:1/api/"} {
			for _, key := range []string{"1", "a/b", "c d", "é?"} {
				for _, q := range []url.Values{nil, extra} {
					if got, want := r.urlFunc(base, q)(key), r.URL(base, key, q); got != want {
						t.Errorf("%+v.urlFunc(%q, %v)(%q) = %q; want %q", r, base, q, key, got, want)
					}
				}
			}
		}
	}
}

// A record is critical exactly when its request carried X-Priority.
func TestCriticalRecorded(t *testing.T) {
	localtest.Measures(t)
	var marked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(criticalHeader) == "critical" {
			marked.Add(1)
		}
	}))
	defer srv.Close()
	c := Config{Targets: []string{srv.URL}, Rate: 200, Duration: time.Second, Keys: 100, Zipf: 1.1, Seed: 1,
		Timeout: 5 * time.Second, Critical: 0.3}
	var got collect
	if _, err := Attack(context.Background(), c, got.add); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range got.recs {
		if r.Critical {
			n++
		}
	}
	if int64(n) != marked.Load() || n < 40 || n > 80 {
		t.Errorf("%d of %d records critical, the server saw %d marked; want the same, about 30%%", n, len(got.recs), marked.Load())
	}
}

// A critical request the client refuses itself (its breaker open) is still
// counted critical.
func TestCriticalRefused(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	b, err := retry.ParseBreaker("1:10s")
	if err != nil {
		t.Fatal(err)
	}
	var got collect
	if _, err := Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: 100, Duration: 300 * time.Millisecond,
		Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second, Breaker: b, Critical: 1}, got.add); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range got.recs {
		if !r.Critical {
			t.Errorf("record %d (%v): Critical = false; want true, every request is", r.Seq, r.Outcome)
		}
		if r.Outcome == BreakerOpen {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("no request refused by the open breaker among %d; want most", len(got.recs))
	}
}

// Stripes of a schedule, run at once as workers run them, send together
// exactly the single schedule: every request k once, at the instant the
// whole schedule has it, from the stripe k mod Stripes.
func TestStripesMakeTheSingleSchedule(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	const stripes, rate = 3, 300
	start := time.Now().Add(50 * time.Millisecond)
	var got [stripes]collect
	var wg sync.WaitGroup
	for i := range stripes {
		wg.Go(func() {
			c := Config{Targets: []string{srv.URL}, Rate: rate, Duration: time.Second, Keys: 100, Zipf: 1.1, Seed: uint64(i),
				Timeout: 5 * time.Second, Start: start, Stripe: i, Stripes: stripes}
			if _, err := Attack(context.Background(), c, got[i].add); err != nil {
				t.Errorf("stripe %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	interval := time.Second / rate
	seen := map[uint64]int{}
	for i := range got {
		for _, r := range got[i].recs {
			if int(r.Seq%stripes) != i {
				t.Errorf("stripe %d sent request %d; want only k mod %d = %d", i, r.Seq, stripes, i)
			}
			if want := start.Add(time.Duration(r.Seq+1) * interval); !r.Intended.Equal(want) {
				t.Errorf("request %d: intended %s after start; want %s", r.Seq, r.Intended.Sub(start), want.Sub(start))
			}
			if r.Outcome == OK && r.Left.Sub(r.Intended) < -time.Millisecond {
				t.Errorf("request %d left %s before it was due", r.Seq, r.Intended.Sub(r.Left))
			}
			seen[r.Seq]++
		}
	}
	for k := range uint64(rate) {
		if seen[k] != 1 {
			t.Errorf("request %d sent %d times over the stripes; want once", k, seen[k])
		}
	}
	if len(seen) != rate {
		t.Errorf("%d distinct requests over the stripes; want %d, the single schedule's", len(seen), rate)
	}
}
