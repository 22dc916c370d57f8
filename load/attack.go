package load

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// seqHeader is the header vegeta's attacker numbers each hit with: the
// herd's clients read it to find the hit's place on the schedule.
const seqHeader = "X-Vegeta-Seq"

// Attack runs c until its duration ends, it is cut, or ctx is done, and
// hands every request's Record to record, one at a time, in completion
// order. It returns the time the schedule started: Record.Intended is
// measured from it.
//
// vegeta's Attacker sends the load: c's schedule is its Pacer, c's keys
// and request its Targeter, and the herd's clients (retries, budgets,
// throttling, hedging, breakers) the RoundTripper of its http.Client, on
// net/http's Transport. Each hit is one Record, its attempts inside. What
// herdbench adds on vegeta's results: latency from the hit's intended
// instant on the schedule (vegeta counts from the actual send), the
// attempts of each request, and a record for every request owed and
// never sent.
func Attack(ctx context.Context, c Config, record func(Record)) (time.Time, error) {
	if err := c.Validate(); err != nil {
		return time.Time{}, err
	}
	start := c.Start
	if start.IsZero() {
		start = time.Now()
	}
	s := newSchedule(c, start)
	h := newHerd(c, s)
	defer h.base.CloseIdleConnections() // each arm starts with its own connections
	workers := uint64(vegeta.DefaultWorkers)
	maxWorkers := uint64(vegeta.DefaultMaxWorkers)
	if c.MaxWorkers > 0 {
		maxWorkers = c.MaxWorkers
	}
	atk := vegeta.NewAttacker(
		// no Timeout: the herd bounds each request itself (herd.RoundTrip)
		vegeta.Client(&http.Client{Transport: h, CheckRedirect: NoRedirects}),
		vegeta.Workers(min(workers, maxWorkers)), vegeta.MaxWorkers(maxWorkers),
		vegeta.MaxBody(0), // read and discarded, never kept
	)
	if !SleepUntil(ctx, start) {
		return start, ctx.Err()
	}
	results := atk.Attack(newTargeter(c), s, 0, "")
	stop := context.AfterFunc(ctx, func() {
		s.halt.At(time.Now())
		atk.Stop()
	})
	defer stop()
	var n uint64 // hits vegeta made: its Seq 0..n-1
	for res := range results {
		n++
		if rec, owed := h.record(res); owed {
			record(rec)
		}
	}
	for j := n; s.owed(j); j++ {
		k := s.global(j)
		record(Record{Seq: k, Intended: s.due(k), Outcome: Unsent})
	}
	return start, ctx.Err()
}

// LateGrace is how long after the window the generator may still send
// the window's requests it is behind on: a request still unsent then is
// recorded Unsent. A moment without a core at the window's end makes late
// requests, not unsent ones; a generator that cannot keep up is seconds
// behind, and what it owes past the grace is never sent.
const LateGrace = 500 * time.Millisecond

// SleepUntil waits until at, or returns false when ctx ends first.
func SleepUntil(ctx context.Context, at time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(at)):
		return true
	}
}

// hit is what the herd's clients did with one of vegeta's hits.
type hit struct {
	sent
	skipped  bool // due after the cut or the halt: not owed, not sent
	critical bool
	class    int
}

// hits are the hits under way, by vegeta's Seq, from the herd's
// RoundTrip to the attack's results loop.
type hits struct {
	mu sync.Mutex
	m  map[uint64]*hit
}

func (hs *hits) put(j uint64, h *hit) {
	hs.mu.Lock()
	hs.m[j] = h
	hs.mu.Unlock()
}

func (hs *hits) take(j uint64) *hit {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.m[j]
	delete(hs.m, j)
	return h
}

// seqOf is the vegeta Seq of req, the hit it is.
func seqOf(req *http.Request) (uint64, bool) {
	v := req.Header[seqHeader]
	if len(v) != 1 {
		return 0, false
	}
	j, err := strconv.ParseUint(v[0], 10, 64)
	return j, err == nil
}

// record turns vegeta's result of hit res.Seq into its Record: latency
// from its intended instant to the end of its answer (vegeta's Timestamp
// plus Latency), and its attempts; owed is false for a hit the schedule
// no longer owed when it left (cut, or ctx ended).
func (h *herd) record(res *vegeta.Result) (Record, bool) {
	k := h.sched.global(res.Seq)
	rec := Record{Seq: k, Intended: h.sched.due(k), Left: res.Timestamp, Code: int(res.Code),
		Method: res.Method, URL: res.URL, Error: res.Error, BytesOut: res.BytesOut}
	if x := h.hits.take(res.Seq); x != nil {
		if x.skipped {
			return Record{}, false
		}
		rec.Critical, rec.Class = x.critical, x.class
		rec.SentAt, rec.Attempts, rec.Hedges = x.at, len(x.at), x.hedges
		if len(x.at) > 0 {
			rec.Left = x.at[0]
		}
	}
	rec.Latency = max(res.End().Sub(rec.Intended), 0)
	rec.Outcome = h.shed.Classify(rec.Code, res.Error)
	if res.Headers != nil {
		rec.Cache = res.Headers.Get("X-Cache")
	}
	return rec, true
}
