package experiment

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
)

// loadBalancer puts in res what the load balancer's counters grew by from
// T to the arm's end, along the samples between (a reload on the way
// counts right), and takes its own 503s out of the clients' shed answers.
// Without haproxy: it does nothing; an unread snapshot is the arm's
// warning, and lb.* is left out.
func (a *armRun) loadBalancer(res *result.ArmResult, atT, end observe.Sample, samples []observe.Sample) {
	if a.tg.HAProxy == nil {
		return
	}
	if atT.LB == nil || end.LB == nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("load balancer: HAProxy's stats were not read at T and at the arm's end (check haproxy.stats: %s, and that it lists backend %s)",
			a.tg.HAProxy.Stats, a.src.HAProxy.Backend))
		return
	}
	g := lbSpan(atT, end, samples)
	lb := lbOf(g, *end.LB)
	lb.Backend = a.src.HAProxy.Backend
	queuePeaks(lb, atT, end, samples)
	peaks(lb, res.Timeline)
	returns(lb, res.Timeline, *end.LB)
	lb.EndToEnd = endToEnd(res, lb)
	res.LB = lb
	own503(res, lb, g)
}

// lbSpan is what HAProxy's counters grew by from one snapshot to another,
// summed along the samples that read them between, as span does the
// stores': a backend whose req_tot went down was reloaded, and counts
// from zero.
func lbSpan(from, to observe.Sample, samples []observe.Sample) observe.LBStats {
	var sum observe.LBStats
	servers := map[string]*observe.LBRow{}
	prev := *from.LB
	add := func(cur observe.LBStats) {
		reset := cur.Backend.Requests < prev.Backend.Requests
		before := map[string]observe.LBRow{}
		for _, r := range prev.Servers {
			before[r.Name] = r
		}
		addRow(&sum.Backend, prev.Backend, cur.Backend, reset)
		for _, r := range cur.Servers {
			if servers[r.Name] == nil {
				servers[r.Name] = &observe.LBRow{Name: r.Name}
			}
			addRow(servers[r.Name], before[r.Name], r, reset)
		}
		prev = cur
	}
	for _, s := range samples {
		if s.LB != nil && s.At.After(from.At) && s.At.Before(to.At) {
			add(*s.LB)
		}
	}
	add(*to.LB)
	for _, r := range to.LB.Servers { // in the stats page's order
		sum.Servers = append(sum.Servers, *servers[r.Name])
	}
	return sum
}

// addRow adds to sum what each counter of a row grew by from p to c.
func addRow(sum *observe.LBRow, p, c observe.LBRow, reset bool) {
	grew := func(a, b int64) int64 { return step(a, b, reset) }
	sum.Requests += grew(p.Requests, c.Requests)
	sum.Sessions += grew(p.Sessions, c.Sessions)
	sum.Retries += grew(p.Retries, c.Retries)
	sum.Redispatches += grew(p.Redispatches, c.Redispatches)
	sum.Responses5xx += grew(p.Responses5xx, c.Responses5xx)
	sum.ConnErrors += grew(p.ConnErrors, c.ConnErrors)
	sum.RespErrors += grew(p.RespErrors, c.RespErrors)
	sum.InternalErrors += grew(p.InternalErrors, c.InternalErrors)
	sum.Downs += grew(p.Downs, c.Downs)
}

// lbOf is the arm's load balancer figures from the counters' growth g and
// the last reading end (each server's weight and status).
func lbOf(g, end observe.LBStats) *result.LoadBalancer {
	lb := &result.LoadBalancer{Requests: g.Backend.Requests, Redispatches: g.Backend.Redispatches,
		Own5xx: g.Own5xx(), Servers: result.LBServers{}}
	last := map[string]observe.LBRow{}
	for _, r := range end.Servers {
		last[r.Name] = r
	}
	for _, r := range g.Servers {
		sv := &result.LBServer{Attempts: r.Sessions, Responses5xx: r.Responses5xx, ConnErrors: r.ConnErrors, Downs: r.Downs,
			Weight: last[r.Name].Weight, Status: last[r.Name].Status}
		lb.ServerAttempts += sv.Attempts
		lb.Servers[r.Name] = sv
	}
	if lb.Requests > 0 {
		lb.Amplification = result.Round4(float64(lb.ServerAttempts) / float64(lb.Requests))
	}
	lb.Retries = g.RetriesMade()
	return lb
}

// peaks sets each server's peak_rps from the timeline's rows from T.
func peaks(lb *result.LoadBalancer, rows []result.Row) {
	window := int(time.Second / result.RowWidth)
	for name, sv := range lb.Servers {
		var sum, best int64
		var in []int64
		for _, r := range rows {
			if r.TMS < 0 {
				continue
			}
			n := r.LBServers[name]
			in = append(in, n)
			sum += n
			if len(in) > window {
				sum -= in[len(in)-1-window]
			}
			best = max(best, sum)
		}
		sv.PeakRPS = float64(best) / (float64(window) * result.RowWidth.Seconds())
	}
}

// queuePeaks sets the backend's and each server's most requests queued at
// once, over the readings from T to the arm's end.
func queuePeaks(lb *result.LoadBalancer, from, to observe.Sample, samples []observe.Sample) {
	read := func(st *observe.LBStats) {
		if st == nil {
			return
		}
		lb.QueuePeak = max(lb.QueuePeak, lbQueued(*st))
		for _, r := range st.Servers {
			if sv := lb.Servers[r.Name]; sv != nil {
				sv.QueuePeak = max(sv.QueuePeak, r.Queue)
			}
		}
	}
	read(from.LB)
	for _, s := range samples {
		if s.At.After(from.At) && s.At.Before(to.At) {
			read(s.LB)
		}
	}
	read(to.LB)
}

// lbQueued is every request HAProxy holds queued in one reading: the
// backend's and its servers'.
func lbQueued(st observe.LBStats) int64 {
	n := st.Backend.Queue
	for _, r := range st.Servers {
		n += r.Queue
	}
	return n
}

// endToEnd multiplies the layers' amplifications: the clients', the load
// balancer's and the database's per server attempt.
func endToEnd(res *result.ArmResult, lb *result.LoadBalancer) float64 {
	if lb.Requests == 0 || lb.ServerAttempts == 0 || res.HTTP.Requests == 0 {
		return 0
	}
	e := res.Retries.Amplification * lb.Amplification
	if res.DB != nil {
		e *= float64(res.DB.Queries) / float64(lb.ServerAttempts)
	}
	return result.Round4(e)
}

// own503 moves the 503s HAProxy made itself from the clients' shed
// answers to errors.lb: a load balancer with no server to try is not the
// service shedding load. HAProxy counts its own 5xx (Own5xx, from the
// counters' growth g) but not by status: those it made for a server's bad
// or late answer (502, 504) are that server's eresp, its own 500s the
// backend's eint, and what is left are its 503s, at most the shed answers
// the clients saw. An estimate: eresp also counts a server's abort after
// a 2xx, and under retry-on a server's retried 5xx hide HAProxy's own, so
// it may count fewer than HAProxy made.
func own503(res *result.ArmResult, lb *result.LoadBalancer, g observe.LBStats) {
	n := lb.Own5xx - g.Backend.InternalErrors
	for _, r := range g.Servers {
		n -= r.RespErrors
	}
	n = min(max(n, 0), res.HTTP.Errors.Shed)
	res.HTTP.Errors.Shed -= n
	res.HTTP.Errors.LB += n
}

// lbRows spreads the load balancer's counters over the timeline: each
// sample's growth since the last that read them, in the row the sample
// falls in (a counter that went down was reset by a reload: it counts
// from zero).
func lbRows(samples []observe.Sample, t time.Time) map[int64]*result.Row {
	out := map[int64]*result.Row{}
	var prev *observe.LBStats
	for _, s := range samples {
		cur := s.LB
		if cur == nil {
			continue
		}
		if prev != nil {
			i := result.RowIndex(s.At, t)
			r := out[i]
			if r == nil {
				r = &result.Row{LBServers: map[string]int64{}, LBWeights: map[string]int64{}}
				out[i] = r
			}
			r.LBRequests += step(prev.Backend.Requests, cur.Backend.Requests, cur.Backend.Requests < prev.Backend.Requests)
			r.LBQueue = max(r.LBQueue, lbQueued(*cur))
			before := map[string]int64{}
			for _, sv := range prev.Servers {
				before[sv.Name] = sv.Sessions
			}
			for _, sv := range cur.Servers {
				n := step(before[sv.Name], sv.Sessions, sv.Sessions < before[sv.Name])
				r.LBServers[sv.Name] += n
				r.LBSent += n
				r.LBWeights[sv.Name] = balanced(sv)
			}
		}
		prev = cur
	}
	return out
}

// balanced is the weight HAProxy balances a server with: its weight while
// it is UP, 0 otherwise.
func balanced(sv observe.LBRow) int64 {
	if !sv.Up() {
		return 0
	}
	return sv.Weight
}

// lbServerPaths are the gate paths of the servers rep's arms saw behind
// the load balancer.
func (r *Report) lbServerPaths() []string {
	seen := map[string]bool{}
	for _, a := range r.Arms {
		if a.LB == nil {
			continue
		}
		for name := range a.LB.Servers {
			for _, f := range result.LBServerFigures {
				seen["lb.servers."+name+"."+f] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
