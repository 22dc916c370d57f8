package model

import (
	"fmt"
	"math"
	"time"
)

// Step is the fluid model's time step.
const Step = 10 * time.Millisecond

// Service is what serves the clients' attempts. It is one of two kinds:
// a FIFO pool (Workers > 0, PerInFlight 0: the testbed's connection
// pools, each attempt Work long once it holds a worker) or a server whose
// latency grows with the attempts in flight (PerInFlight > 0: Brooker's,
// every attempt served at once, Work plus PerInFlight for each attempt in
// flight when it starts). Either runs on the attempts whose clients gave
// up: the loads are detached.
type Service struct {
	Workers     float64       // attempts served at once, over every replica (a pool)
	Work        time.Duration // one attempt's service time when healthy
	PerInFlight time.Duration // the latency each attempt in flight adds (Brooker's); 0 for a pool
	// Deadline: the pool gives up a wait in its queue longer than this
	// (the replicas' db-timeout); 0: never
	Deadline time.Duration
	// Stuck: the attempts a second the pool completes while it gives up
	// waits (the stuck state's measured capacity: every wait given up
	// costs a connection); 0: its healthy capacity throughout
	Stuck float64
}

// Capacity is the pool's healthy capacity: attempts a second. Brooker's
// server has no fixed capacity: its attempts in flight grow without bound
// once the attempts a second pass 1/PerInFlight.
func (s Service) Capacity() float64 {
	if s.PerInFlight > 0 {
		return 1 / s.PerInFlight.Seconds()
	}
	return s.Workers / s.Work.Seconds()
}

// Backoff is how long a client waits before retry k (from 1): Base ×
// 2^(k-1), at most Cap (0: no cap); with Jitter (full jitter) a uniform
// draw in [0, that]. The zero Backoff retries at once.
type Backoff struct {
	Base   time.Duration
	Cap    time.Duration
	Jitter bool
}

// Clients send the attempts: an open-model Rate of requests, each
// answered within Timeout or tried again, up to Retries more times.
type Clients struct {
	Rate    float64 // requests a second
	Timeout time.Duration
	Retries int
	Backoff Backoff
	// Budget: retries at most this share of the requests (a retry
	// budget, retry-budget=10% is 0.1); 0: no budget
	Budget float64
}

// Fault is what a trigger does for Duration: every attempt's service
// takes Slower longer (slowdb), and/or the clients offer Rate instead of
// their own (a spike; 0: their own).
type Fault struct {
	Duration time.Duration
	Slower   time.Duration
	Rate     float64
}

// Trace is a fluid run, one entry a Step: the fault starts at step
// Start and ends at step End.
type Trace struct {
	Start, End int
	Offered    []float64 // requests a second the clients began
	Attempts   []float64 // attempts a second they sent (requests and retries)
	Goodput    []float64 // attempts a second answered within the timeout
	InFlight   []float64 // attempts waiting in the pool's queue, or in flight on Brooker's server
	Started    []float64 // attempts a second the service began: the database's queries
	GaveUp     []float64 // attempts a second the pool gave up past its deadline
	// First[s][k]: of the requests a second begun at step s, those
	// answered on their first attempt k steps later (nil: none were)
	First [][]float64
}

// Check names the first input the model cannot run on, and what it
// accepts.
func Check(s Service, c Clients, f Fault) error {
	switch {
	case s.PerInFlight < 0:
		return fmt.Errorf("service per-in-flight %v: want >= 0", s.PerInFlight)
	case s.PerInFlight == 0 && !(s.Workers > 0):
		return fmt.Errorf("service workers %v: want > 0 (a pool) or a per-in-flight latency (Brooker's)", s.Workers)
	case !(s.Work > 0):
		return fmt.Errorf("service work %v: want > 0 (a capacity of 0 serves nothing)", s.Work)
	case s.Deadline < 0 || s.Stuck < 0:
		return fmt.Errorf("service deadline %v, stuck %v a second: want >= 0", s.Deadline, s.Stuck)
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("clients' rate %v: want > 0 requests a second", c.Rate)
	case !(c.Timeout > 0):
		return fmt.Errorf("clients' timeout %v: want > 0", c.Timeout)
	case c.Retries < 0 || c.Budget < 0:
		return fmt.Errorf("clients' retries %d, budget %v: want >= 0", c.Retries, c.Budget)
	case c.Backoff.Base < 0 || c.Backoff.Cap < 0:
		return fmt.Errorf("clients' backoff %v, cap %v: want >= 0", c.Backoff.Base, c.Backoff.Cap)
	case f.Duration < 0 || f.Slower < 0 || f.Rate < 0:
		return fmt.Errorf("fault %v, slower %v, rate %v: want >= 0", f.Duration, f.Slower, f.Rate)
	}
	return nil
}

// run is one fluid run's inputs: the fault starts at lead, and from
// escapeAt (steps; 0: never) the clients offer escapeRate.
type run struct {
	s          Service
	c          Clients
	f          Fault
	lead, tail time.Duration // before the fault, after it
	escapeAt   int
	escapeRate float64
}

// cohort is the attempts sent in one step with one attempt number.
type cohort struct {
	sent, attempt int
	amount        float64
	settled       bool // its clients know: answered in time, or failed
}

// state is a run in progress.
type state struct {
	run
	n        int
	all      []cohort
	sentAt   [][]int     // the cohorts sent at each step (a split one too)
	due      [][]int     // the cohorts that complete at each step
	retry    [][]float64 // retry[t][k]: attempts numbered k due at step t
	queue    []int       // the pool's FIFO: cohorts not yet started
	inFlight float64
	busy     float64 // the pool's workers holding an attempt
}

func steps(d time.Duration) int { return int(math.Round(float64(d) / float64(Step))) }

// Run steps the model through lead, the fault and tail.
func (r run) Run() Trace {
	dt := Step.Seconds()
	start := steps(r.lead)
	end := start + steps(r.f.Duration)
	n := end + steps(r.tail)
	tr := Trace{Start: start, End: end, Offered: make([]float64, n), Attempts: make([]float64, n), Goodput: make([]float64, n),
		InFlight: make([]float64, n), Started: make([]float64, n), GaveUp: make([]float64, n), First: make([][]float64, n)}
	st := &state{run: r, n: n, sentAt: make([][]int, n+1), due: make([][]int, n+1), retry: make([][]float64, n+1)}
	timeout := max(1, steps(r.c.Timeout))
	for t := range n {
		faulted := t >= start && t < end
		rate := r.c.Rate
		if faulted && r.f.Rate > 0 {
			rate = r.f.Rate
		}
		if r.escapeAt > 0 && t >= r.escapeAt {
			rate = r.escapeRate
		}
		work := r.s.Work
		if faulted {
			work += r.f.Slower
		}
		tr.Offered[t], tr.Attempts[t] = rate, st.send(t, rate*dt)/dt
		if r.s.PerInFlight > 0 {
			tr.Started[t] = st.admit(t, work) / dt
		} else {
			for _, i := range st.due[t] { // their workers are free for this step's
				st.busy -= st.all[i].amount
			}
			started, gaveUp := st.serve(t, tr.replyAt(t, r.s.Work, r.f.Slower, n))
			tr.Started[t], tr.GaveUp[t] = started/dt, gaveUp/dt
		}
		for _, i := range st.due[t] {
			c := &st.all[i]
			if r.s.PerInFlight > 0 {
				st.inFlight -= c.amount
			}
			if t-c.sent <= timeout && !c.settled {
				tr.Goodput[t] += c.amount / dt
				c.settled = true
				if c.attempt == 0 {
					tr.answered(c.sent, t-c.sent, timeout, c.amount/dt)
				}
			}
		}
		if s := t - timeout; s >= 0 {
			for _, i := range st.sentAt[s] {
				if c := &st.all[i]; !c.settled {
					c.settled = true
					st.retryLater(t, *c)
				}
			}
		}
		tr.InFlight[t] = st.inFlight
	}
	return tr
}

// answered files requests a second begun at step s and answered on
// their first attempt k steps later.
func (tr Trace) answered(s, k, timeout int, rate float64) {
	if tr.First[s] == nil {
		tr.First[s] = make([]float64, timeout+1)
	}
	tr.First[s][k] += rate
}

// add files a cohort.
func (st *state) add(c cohort) int {
	st.all = append(st.all, c)
	i := len(st.all) - 1
	st.sentAt[c.sent] = append(st.sentAt[c.sent], i)
	return i
}

// send begins the step's attempts: its new requests and the retries due,
// the retries cut to the budget's share of the requests. It returns the
// attempts sent.
func (st *state) send(t int, requests float64) float64 {
	st.add(cohort{sent: t, amount: requests})
	var want float64
	for _, a := range st.retry[t] {
		want += a
	}
	scale := 1.0
	if st.c.Budget > 0 && want > st.c.Budget*requests {
		scale = st.c.Budget * requests / want
	}
	total := requests
	for k, a := range st.retry[t] {
		if a*scale > 0 {
			st.add(cohort{sent: t, attempt: k, amount: a * scale})
			total += a * scale
		}
	}
	return total
}

// admit starts the step's attempts on Brooker's server: each takes work
// plus PerInFlight for every attempt in flight. It returns the attempts
// started.
func (st *state) admit(t int, work time.Duration) float64 {
	var started float64
	for _, i := range st.sentAt[t] {
		lat := work + time.Duration(st.inFlight*float64(st.s.PerInFlight))
		at := min(st.n, t+max(1, steps(lat)))
		st.due[at] = append(st.due[at], i)
		st.inFlight += st.all[i].amount
		started += st.all[i].amount
	}
	return started
}

// replyAt is the step at which an attempt the pool starts at step t is
// answered: the database replies work later, and a reply sent while the
// fault is on is held slower more (slowdb's latency toxic, on every
// Postgres reply), or until the fault ends, the sooner: removing the
// toxic releases every reply it holds (toxiproxy v2.12.0, embedded in
// the testbed: ToxicLink.RemoveToxic flushes the toxic's buffer, and
// LatencyToxic.Pipe passes its current reply on at once when
// interrupted). A reply sent before the fault is not held.
func (tr Trace) replyAt(t int, work, slower time.Duration, n int) int {
	at := t + max(1, steps(work))
	if at >= tr.Start && at < tr.End {
		at = min(at+steps(slower), tr.End)
	}
	return min(n, at)
}

// serve queues the step's attempts in the pool and starts the oldest on
// its free workers, each answered at step at; a wait longer than the
// deadline is given up (its client fails then, if it has not yet), and
// while the pool gives waits up it completes only Stuck a second. It
// returns the attempts started, and those given up.
func (st *state) serve(t, at int) (started, gaveUp float64) {
	for _, i := range st.sentAt[t] {
		st.queue = append(st.queue, i)
		st.inFlight += st.all[i].amount
	}
	budget := st.s.Workers - st.busy
	if st.s.Deadline > 0 {
		limit := steps(st.s.Deadline)
		for len(st.queue) > 0 && t-st.all[st.queue[0]].sent > limit {
			c := &st.all[st.queue[0]]
			st.inFlight -= c.amount
			gaveUp += c.amount
			if !c.settled {
				c.settled = true
				st.retryLater(t, *c)
			}
			st.queue = st.queue[1:]
		}
		if gaveUp > 0 && st.s.Stuck > 0 {
			budget = min(budget, st.s.Stuck*Step.Seconds())
		}
	}
	busy := st.busy
	for len(st.queue) > 0 && budget > 1e-12 {
		head := st.queue[0]
		c := st.all[head]
		if c.amount <= budget {
			budget -= c.amount
			st.due[at] = append(st.due[at], head)
			st.inFlight -= c.amount
			st.busy += c.amount
			st.queue = st.queue[1:]
			continue
		}
		// part of the cohort starts: that part is a cohort of its own
		part := c
		part.amount = budget
		st.due[at] = append(st.due[at], st.add(part))
		st.all[head].amount -= budget
		st.inFlight -= budget
		st.busy += budget
		budget = 0
	}
	return st.busy - busy, gaveUp
}

// retryLater schedules a failed attempt's retry, spread over its
// backoff's jitter.
func (st *state) retryLater(t int, c cohort) {
	k := c.attempt + 1
	if k > st.c.Retries {
		return
	}
	wait := time.Duration(0)
	if b := st.c.Backoff; b.Base > 0 {
		wait = b.Base << (k - 1)
		if b.Cap > 0 && wait > b.Cap || wait < 0 {
			wait = b.Cap
		}
	}
	slices := 1
	if st.c.Backoff.Jitter && steps(wait) > 1 {
		slices = min(steps(wait), 50)
	}
	for j := range slices {
		// the step's attempts are sent: a retry at once goes in the next
		at := t + max(1, steps(wait))
		if slices > 1 {
			at = t + max(1, steps(wait)*(2*j+1)/(2*slices))
		}
		if at < len(st.retry) {
			if st.retry[at] == nil {
				st.retry[at] = make([]float64, st.c.Retries+1)
			}
			st.retry[at][k] += c.amount / float64(slices)
		}
	}
}
