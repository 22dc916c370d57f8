package model

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The look-aside cache's herd (docs/metastability.md, "A look-aside
// cache"): at T the Hot hottest keys expire at once, and every request for
// one of them misses and loads it through its replica's pool of database
// connections. Its loop is the refill's, not the retries': once the
// misses wait in the pool past the clients' timeout, loads that die with
// their requests never fill the cache, and the next requests miss again.
//
// The model is a discrete-event run of the testbed's own mechanics, one
// request at a time: requests evenly spaced (vegeta's constant pacer),
// round-robin over the replicas, each key drawn from Zipf(s) over the key
// space with a seeded source (the load generator's distribution); a hit
// answers at once; a miss's load waits in its replica's FIFO pool and
// holds a connection for the query's cost. A load gives up at its
// deadline (its request's timeout when canceled, the db-timeout always):
// in the queue it costs nothing, mid-query it costs the connection the
// time it ran and Reconnect. A completed load fills the key. The run is
// judged by the verdict's rule of results v2 (Judge, lookaside_verdict.go).

// The strategies the model knows: the testbed's names.
const (
	LookAsideNone         = "none"         // every miss loads (cache-aside)
	LookAsideSingleflight = "singleflight" // one load a key in each replica; its other misses wait for it
	LookAsideLock         = "lock"         // one load a key in the fleet; the other misses read the stale copy
)

// LookAsideP99Band is how far over the baseline's p99 a request is
// slow: the verdict's band (50% over it, or its floor, whichever is
// larger) over a baseline of cache hits, a few milliseconds: the floor.
var LookAsideP99Band = VerdictBand.P99Floor

// LookAsideRow is the width of a row of the model's timeline: the
// results' (RowWidth).
const LookAsideRow = RowWidth

// LookAside is the testbed under the expire trigger: its load, its
// replicas and pools, and a strategy.
type LookAside struct {
	Rate      float64       // requests a second, evenly spaced, no retries
	Keys      int           // the key space: ids 1..Keys (--keys)
	Zipf      float64       // P(id) ∝ id^-Zipf, above 1 (--zipf)
	Replicas  int           // requests round-robin over them
	Pool      int           // database connections a replica (db_pool)
	Cost      time.Duration // one load's query (query_cost)
	DBTimeout time.Duration // a load's bound, its pool wait included (db_timeout)
	Timeout   time.Duration // the clients' (--timeout)
	Canceled  bool          // abandoned_load: canceled (a load dies with its request); false: detached
	Strategy  string        // LookAsideNone, LookAsideSingleflight or LookAsideLock
	// Reconnect: how much longer a query given up mid-flight holds its
	// connection's place (pgx closes the connection; the pool opens a
	// new one); 0: free
	Reconnect time.Duration
	Horizon   time.Duration // the arm's longest after T (--after auto:MAX)
	Runs      int           // runs a probe, each its own draw of keys; the majority decides (--repeat)
	Seed      uint64        // the first run's draw; run i draws with Seed+i
}

// Check names the first input the model cannot run on, and what it
// accepts.
func (la LookAside) Check() error {
	switch {
	case !(la.Rate > 0) || math.IsInf(la.Rate, 0):
		return fmt.Errorf("rate %v: want > 0 requests a second", la.Rate)
	case la.Keys < 1:
		return fmt.Errorf("keys %d: want 1 or more", la.Keys)
	case !(la.Zipf > 1):
		return fmt.Errorf("zipf %v: want above 1", la.Zipf)
	case la.Replicas < 1 || la.Pool < 1:
		return fmt.Errorf("replicas %d, pool %d: want 1 or more (a capacity of 0 serves nothing)", la.Replicas, la.Pool)
	case !(la.Cost > 0) || la.Timeout <= 0 || la.DBTimeout <= 0:
		return fmt.Errorf("query cost %v, timeout %v, db-timeout %v: want > 0", la.Cost, la.Timeout, la.DBTimeout)
	case la.Reconnect < 0 || la.Horizon < la.Settle()+time.Second:
		return fmt.Errorf("reconnect %v, horizon %v: want >= 0, and a horizon of at least the settle time and a hold (%v)", la.Reconnect, la.Horizon, la.Settle()+time.Second)
	case la.Runs < 1:
		return fmt.Errorf("runs %d: want 1 or more", la.Runs)
	}
	switch la.Strategy {
	case LookAsideNone, LookAsideSingleflight, LookAsideLock:
		return nil
	}
	return fmt.Errorf("strategy %q: want %s, %s or %s", la.Strategy, LookAsideNone, LookAsideSingleflight, LookAsideLock)
}

// Settle is the verdict's settle time: the longest of 2 s, the clients'
// timeout (one attempt) and the replicas' db-timeout.
func (la LookAside) Settle() time.Duration { return max(2*time.Second, la.Timeout, la.DBTimeout) }

// ZipfShare is the share of requests that fall on the k hottest of n
// keys under Zipf(s): H(k, s) / H(n, s).
func ZipfShare(k, n int, s float64) float64 {
	h := func(m int) float64 {
		sum := 0.0
		for i := m; i >= 1; i-- { // smallest terms first
			sum += math.Pow(float64(i), -s)
		}
		return sum
	}
	return h(min(k, n)) / h(n)
}

// laLoad is one load of a key: a miss's (none), a flight's (singleflight)
// or a lock holder's. reqs are the arrivals of the requests it answers.
type laLoad struct {
	key, replica int
	deadline     float64 // it gives up then, waiting or running
	end, free    float64 // when it completed or gave up; when its connection is free again
	ok, done     bool
	reqs         []float64
}

// live: another miss of the key at t would share it (it has not ended).
func (l *laLoad) live(t float64) bool { return l != nil && !l.done && t < l.deadline }

// laPool is one replica's connections and their FIFO queue.
type laPool struct {
	free  int
	queue []*laLoad
}

// laEnds orders the running loads by when their connection is free.
type laEnds []*laLoad

func (e laEnds) Len() int           { return len(e) }
func (e laEnds) Less(i, j int) bool { return e[i].free < e[j].free }
func (e laEnds) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *laEnds) Push(x any)        { *e = append(*e, x.(*laLoad)) }
func (e *laEnds) Pop() any {
	old := *e
	l := old[len(old)-1]
	*e = old[:len(old)-1]
	return l
}

// LookAsideTimeline is one run's rows from T, LookAsideRow wide: by the
// row a request was sent in, the requests, those answered in time, and
// those slow (answered by a load, or not at all: the p99's); by the row a
// load completed in, the database's completed queries.
type LookAsideTimeline struct {
	Sent, OK, Slow, DB []int
	Loads              int // loads completed
	// Dropped: loads given up waiting for a connection (the pools'
	// canceled acquires); Cut: given up mid-query, each a connection
	// closed and opened again (the pools' new connections)
	Dropped, Cut int
}

// key draws an id from Zipf(s) over 1..Keys by its cumulative weights:
// the distribution of the generator's draws (math/rand/v2's Zipf),
// without that sampler's exp and log, which took more than half of a
// bisection's time (a CPU profile of BenchmarkLookAsideTippingPoint).
func (s *laSim) key() int {
	u := s.src.Float64() * s.cdf[len(s.cdf)-1]
	lo, hi := 0, len(s.cdf)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if s.cdf[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// laSim is one run in progress.
type laSim struct {
	la      LookAside
	cost    float64
	warm    []bool
	pools   []laPool
	running laEnds
	flights [][]*laLoad // singleflight: [replica][key]; lock: [0][key]
	tl      *LookAsideTimeline
	src     *rand.Rand
	cdf     []float64 // cdf[i]: the weight of ids 1..i+1, id^-Zipf each
	next    int       // the next request's number
	total   int
	pace    []laPace // the rate's schedule, by time: the rate, then the escape's steps
}

// laPace is a part of the load's schedule: from instant from (seconds
// from T), request n0 and those after it, evenly spaced at rate.
type laPace struct {
	from float64
	n0   int
	rate float64
}

// at is the intended instant of request n: evenly spaced at its part's
// rate (vegeta's constant pacer, load.Steps).
func (s *laSim) at(n int) float64 {
	i := len(s.pace) - 1
	for i > 0 && s.pace[i].n0 > n {
		i--
	}
	p := s.pace[i]
	return p.from + float64(n-p.n0)/p.rate
}

// stepDown sets the load to rate from instant from: the requests up to
// it keep their pace, and the count to the horizon follows the new one.
func (s *laSim) stepDown(from, rate float64) {
	last := s.pace[len(s.pace)-1]
	n0 := last.n0 + int(math.Ceil((from-last.from)*last.rate-1e-9))
	s.pace = append(s.pace, laPace{from: from, n0: n0, rate: rate})
	s.total = n0 + int((s.la.Horizon.Seconds()-from)*rate)
}

// Simulate runs the herd of hot expired keys with the draw of seed, from
// T to the horizon, and returns its timeline. Before T every key is
// cached (the testbed fills every key before an arm, and the TTL, 60 s,
// outlasts the arm) and the pools are idle.
func (la LookAside) Simulate(hot int, seed uint64) LookAsideTimeline {
	s := la.newSim(hot, seed)
	s.advance(math.Inf(1))
	return *s.tl
}

// Run is one run judged as it goes (Judge), simulated only as far as the
// judge reads: a probe stopped at its settle time costs a third of the
// horizon.
func (la LookAside) Run(hot int, seed uint64) LookAsideVerdict {
	s := la.newSim(hot, seed)
	// the judge at j reads the rows sent by j less the timeout; their
	// loads have ended, and given their connections back, by then plus
	// the longest a load lasts and its reconnect
	last := la.DBTimeout
	if la.Canceled {
		last = min(la.Timeout, la.DBTimeout)
	}
	return la.judge(s.tl, func(j time.Duration) { s.advance((j - la.Timeout + last + la.Reconnect).Seconds()) })
}

func (la LookAside) newSim(hot int, seed uint64) *laSim {
	rows := int(la.Horizon / LookAsideRow)
	s := &laSim{la: la, cost: la.Cost.Seconds(), warm: make([]bool, la.Keys+1), pools: make([]laPool, la.Replicas)}
	s.tl = &LookAsideTimeline{Sent: make([]int, rows), OK: make([]int, rows), Slow: make([]int, rows), DB: make([]int, rows)}
	for id := hot + 1; id <= la.Keys; id++ {
		s.warm[id] = true
	}
	for i := range s.pools {
		s.pools[i].free = la.Pool
	}
	s.flights = make([][]*laLoad, la.Replicas)
	for i := range s.flights {
		s.flights[i] = make([]*laLoad, la.Keys+1)
	}
	s.src = rand.New(rand.NewPCG(seed, 0x6c6f6f6b61736964)) // "lookasid"
	s.cdf = make([]float64, la.Keys)
	total := 0.0
	for i := range s.cdf {
		total += math.Pow(float64(i+1), -la.Zipf)
		s.cdf[i] = total
	}
	s.total = int(la.Rate * la.Horizon.Seconds())
	s.pace = []laPace{{rate: la.Rate}}
	return s
}

// advance sends the requests due before t and ends the loads due by t.
func (s *laSim) advance(t float64) {
	for ; s.next < s.total; s.next++ {
		at := s.at(s.next)
		if at >= t {
			break
		}
		s.until(at)
		s.request(at, s.key(), s.next%s.la.Replicas)
	}
	s.until(t)
}

// row is the row of instant t, or -1 past the horizon.
func (s *laSim) row(t float64) int {
	r := int(t / LookAsideRow.Seconds())
	if r >= len(s.tl.Sent) {
		return -1
	}
	return r
}

// request is one request sent at t for key id through replica r.
func (s *laSim) request(t float64, id, r int) {
	row := s.row(t)
	s.tl.Sent[row]++
	if s.warm[id] {
		s.tl.OK[row]++
		return
	}
	switch s.la.Strategy {
	case LookAsideSingleflight:
		if f := s.flights[r][id]; f.live(t) {
			f.reqs = append(f.reqs, t)
			return
		}
	case LookAsideLock:
		if f := s.flights[0][id]; f.live(t) { // the stale copy, at once
			s.tl.OK[row]++
			return
		}
	}
	l := &laLoad{key: id, replica: r, deadline: t + s.la.DBTimeout.Seconds(), reqs: []float64{t}}
	if s.la.Canceled {
		l.deadline = t + min(s.la.Timeout, s.la.DBTimeout).Seconds()
	}
	switch s.la.Strategy {
	case LookAsideSingleflight:
		s.flights[r][id] = l
	case LookAsideLock:
		s.flights[0][id] = l
	}
	s.pools[r].queue = append(s.pools[r].queue, l)
	s.dispatch(r, t)
}

// dispatch starts the loads waiting in replica r's queue while it has a
// free connection at t, dropping those whose deadline passed (a wait
// given up costs no connection).
func (s *laSim) dispatch(r int, t float64) {
	p := &s.pools[r]
	for p.free > 0 && len(p.queue) > 0 {
		l := p.queue[0]
		p.queue = p.queue[1:]
		if l.deadline <= t {
			l.end, l.done = l.deadline, true
			s.tl.Dropped++
			s.finish(l)
			continue
		}
		p.free--
		if t+s.cost <= l.deadline {
			l.end, l.ok, l.free = t+s.cost, true, t+s.cost
		} else {
			l.end, l.free = l.deadline, l.deadline+s.la.Reconnect.Seconds()
		}
		heap.Push(&s.running, l)
	}
}

// until ends every running load whose connection is free by t, in order.
func (s *laSim) until(t float64) {
	for len(s.running) > 0 && s.running[0].free <= t {
		l := heap.Pop(&s.running).(*laLoad)
		l.done = true
		s.finish(l)
		s.pools[l.replica].free++
		s.dispatch(l.replica, l.free)
	}
}

// finish counts what load l's end did: a completed load fills its key
// and answers the requests still waiting; a load given up answers none.
func (s *laSim) finish(l *laLoad) {
	if !l.ok && l.free > 0 {
		s.tl.Cut++
	} else if l.ok {
		s.tl.Loads++
		s.warm[l.key] = true
		if r := s.row(l.end); r >= 0 {
			s.tl.DB[r]++
		}
	}
	for _, a := range l.reqs {
		r := s.row(a)
		inTime := l.ok && l.end <= a+s.la.Timeout.Seconds()
		if inTime {
			s.tl.OK[r]++
		}
		if !inTime || l.end-a > LookAsideP99Band.Seconds() {
			s.tl.Slow[r]++
		}
	}
}

// Probe is one probe of a sweep: Runs runs of the herd of hot expired
// keys, each its own draw, and whether the majority tipped (a tie tips,
// as the sweep's). Back is the median recovery of the runs that came
// back, when the probe did not tip.
func (la LookAside) Probe(hot int) (tips bool, back time.Duration, runs []LookAsideVerdict) {
	var backs []time.Duration
	tipped := 0
	for i := range la.Runs {
		v := la.Run(hot, la.Seed+uint64(i))
		runs = append(runs, v)
		if v.Tips {
			tipped++
		} else {
			backs = append(backs, v.Recovery)
		}
	}
	tips = 2*tipped >= la.Runs
	if !tips {
		slices.Sort(backs)
		back = backs[(len(backs)-1)/2]
	}
	return tips, back, runs
}

// TippingPoint is the fewest hot keys whose expiry tips the arm, by
// bisection over 1..Keys (the sweep's --vary hot_keys, to one key); ok
// false when not even every key's does.
func (la LookAside) TippingPoint() (int, bool, error) {
	if err := la.Check(); err != nil {
		return 0, false, err
	}
	if tips, _, _ := la.Probe(la.Keys); !tips {
		return 0, false, nil
	}
	lo, hi := 0, la.Keys // lo survived (no key expired), hi tipped
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if tips, _, _ := la.Probe(mid); tips {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true, nil
}
