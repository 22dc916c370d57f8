package load

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// attack is one run of a schedule. It does what vegeta's attacker did for
// herdbench (a pacer, workers that send, a channel of results), without
// its hand-offs: each worker takes the schedule's next hit itself, waits
// for its instant on a kernel timer of its own, sends it through the
// herd's clients straight to the transport, and records it, so the wake
// that ends the wait is the one that sends. vegeta's way woke its pacer,
// which woke a worker through a channel, whose http.Client started a
// goroutine and a timer per request to bound it (herdbench's transport
// being one net/http does not know), and whose result went through
// another channel to the loop that recorded it.
//
// Workers grow as vegeta's do: when a worker takes a hit that is already
// due, every worker was busy at its instant, and one more starts, up to
// MaxWorkers.
type attack struct {
	c        Config
	start    time.Time
	interval time.Duration
	last     time.Time     // no hit leaves after it: the window and LateGrace
	bound    time.Duration // one request's deadline, its retries included
	herd     *herd
	target   *targeter
	record   func(Record)
	recMu    sync.Mutex // record is called one at a time

	mu       sync.Mutex // the claims
	next     uint64     // the stripe's next hit
	declined []uint64   // hits taken and never sent
	sleepers []*sleeper // to interrupt when the attack stops
	stopped  bool       // no more hits: ctx ended, cut, or a hit past last

	stoppedAt atomic.Int64 // when ctx ended it, from start; 0: it did not
	workers   atomic.Uint64
	wg        sync.WaitGroup
}

// initialWorkers is how many workers an attack starts with, as vegeta's
// DefaultWorkers.
const initialWorkers = 10

func newAttack(c Config, start time.Time, record func(Record)) *attack {
	return &attack{c: c, start: start, interval: time.Second / time.Duration(c.Rate),
		last: start.Add(c.Duration + LateGrace), bound: c.Bound(),
		herd: newHerd(c), target: newTargeter(c), record: record}
}

// run sends the schedule until it ends, is cut, or ctx ends, and returns
// once every request sent was answered or gave up.
func (a *attack) run(ctx context.Context) {
	n := uint64(initialWorkers)
	if a.c.MaxWorkers > 0 {
		n = min(n, a.c.MaxWorkers)
	}
	a.workers.Store(n)
	for range n {
		a.wg.Go(a.work)
	}
	done := make(chan struct{})
	go func() {
		a.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
		a.stoppedAt.Store(int64(max(time.Since(a.start), 1)))
		a.stop()
	case <-a.c.Cut.cut():
		a.interrupt() // sleepers for hits past the cut stop at once
	}
	select {
	case <-done:
	case <-ctx.Done():
		a.stoppedAt.CompareAndSwap(0, int64(max(time.Since(a.start), 1)))
		a.stop()
		<-done
	}
}

// work takes hits until the schedule has none left for it.
func (a *attack) work() {
	s := &sleeper{}
	defer s.close()
	for {
		j, key, ok := a.claim()
		if !ok {
			return
		}
		k := a.c.global(j)
		due := a.start.Add(time.Duration(k+1) * a.interval)
		if a.c.Cut.after(due) {
			return // cut before its instant: never owed
		}
		if time.Now().Before(due) {
			if !a.wait(s, due) {
				a.decline(j)
				return
			}
		} else if w := a.workers.Load(); a.c.MaxWorkers == 0 || w < a.c.MaxWorkers {
			if a.workers.CompareAndSwap(w, w+1) {
				a.wg.Go(a.work) // every worker was busy when it was due
			}
		}
		if time.Now().After(a.last) {
			a.stop() // as vegeta, the first hit past the grace ends the attack
			a.decline(j)
			return
		}
		rec := a.hit(k, key, due)
		a.recMu.Lock()
		a.record(rec)
		a.recMu.Unlock()
	}
}

// claim takes the stripe's next hit and draws its key, so the keys follow
// the schedule's order; false once the schedule has no more.
func (a *attack) claim() (uint64, string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := a.next
	if a.stopped || time.Duration(a.c.global(j)+1)*a.interval > a.c.Duration {
		return 0, "", false
	}
	a.next++
	return j, a.target.keys.Key(), true
}

// wait sleeps until due, and says whether the hit may still go: not when
// the attack stopped, nor when the schedule was cut before due.
func (a *attack) wait(s *sleeper, due time.Time) bool {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return false
	}
	if !s.opened {
		s.open() // a worker that never sleeps (a saturated attack) costs no timer
		a.sleepers = append(a.sleepers, s)
	}
	a.mu.Unlock()
	if s.until(due) {
		return !a.c.Cut.after(due)
	}
	// interrupted: by a stop, or by a cut that may fall after due
	if a.isStopped() || a.c.Cut.after(due) {
		return false
	}
	time.Sleep(time.Until(due)) // its timer interrupted for good: a cut in the next moments
	return !a.c.Cut.after(due)
}

func (a *attack) isStopped() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopped
}

// stop takes no more hits and wakes the sleepers.
func (a *attack) stop() {
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	a.interrupt()
}

// interrupt wakes every sleeper, now and later, to look at the schedule
// again.
func (a *attack) interrupt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sleepers {
		s.interrupt()
	}
}

// decline notes a hit taken and never sent.
func (a *attack) decline(j uint64) {
	a.mu.Lock()
	a.declined = append(a.declined, j)
	a.mu.Unlock()
}

// recordUnsent records what the schedule owed and the generator never
// sent: it fell behind, and the load ended before it caught up. What a
// cut or ctx ended was never owed.
func (a *attack) recordUnsent() {
	end := a.c.Duration
	if at := time.Duration(a.stoppedAt.Load()); at > 0 && at < end {
		end = at
	}
	if at, ok := a.c.Cut.When(); ok && at.Sub(a.start) < end {
		end = max(at.Sub(a.start), 0)
	}
	owed := func(j uint64) bool { return a.c.global(j) < uint64(end/a.interval) }
	unsent := func(j uint64) {
		k := a.c.global(j)
		a.record(Record{Seq: k, Intended: a.start.Add(time.Duration(k+1) * a.interval), Outcome: Unsent})
	}
	for _, j := range a.declined {
		if owed(j) {
			unsent(j)
		}
	}
	for j := a.next; owed(j); j++ {
		unsent(j)
	}
}

// hit sends request k for key, due at due, and is its Record: latency from
// due to the end of its answer's body.
func (a *attack) hit(k uint64, key string, due time.Time) Record {
	began := time.Now()
	ctx := &deadline{began.Add(a.bound)} // the connection's deadline bounds it: no timer per request
	rec := Record{Seq: k, Intended: due, Left: began, Critical: isCritical(k, a.c.Critical)}
	var s sent
	req, err := a.target.request(ctx, k, key, rec.Critical)
	var resp *http.Response
	if err == nil {
		resp, err = a.herd.roundTrip(req, k, &s)
	}
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil {
			rec.Code, rec.Cache = resp.StatusCode, resp.Header.Get("X-Cache")
		}
	}
	rec.Latency = max(time.Since(due), 0)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	rec.Outcome = Classify(rec.Code, msg)
	rec.SentAt, rec.Attempts, rec.Hedges = s.at, len(s.at), s.hedges
	if len(s.at) > 0 {
		rec.Left = s.at[0]
	}
	return rec
}

// targeter makes each hit's request: its key, the endpoints in turn by the
// hit's number. Requests whose headers do not depend on the key share one
// prepared header, which nothing on the way writes to.
type targeter struct {
	keys            KeySource
	req             Request
	urls            []func(key string) string
	header          http.Header // the config's own, for templated headers
	plain, critical http.Header
}

func newTargeter(c Config) *targeter {
	t := &targeter{keys: c.Source, req: c.Request.orDefault(), header: c.Header}
	if t.keys == nil {
		t.keys = NewKeys(c.Keys, c.Zipf, c.Seed)
	}
	for _, base := range c.Targets {
		t.urls = append(t.urls, t.req.urlFunc(base, c.Query))
	}
	t.plain, t.critical = c.Header.Clone(), c.Header.Clone()
	if t.critical == nil {
		t.plain, t.critical = http.Header{}, http.Header{}
	}
	t.critical.Set(criticalHeader, "critical")
	return t
}

// request is hit k's request for key.
func (t *targeter) request(ctx context.Context, k uint64, key string, critical bool) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, t.req.Method, t.urls[k%uint64(len(t.urls))](key), nil)
	if err != nil {
		return nil, err
	}
	switch {
	case len(t.req.Headers) > 0:
		req.Header = t.req.Header(key, t.header)
		if critical {
			req.Header.Set(criticalHeader, "critical")
		}
	case critical:
		req.Header = t.critical
	default:
		req.Header = t.plain
	}
	return req, nil
}
