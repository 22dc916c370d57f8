package livemetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/observe"
)

// The load balancer's families: HAProxy's counters as the sampler reads
// them every 100 ms (observe.LBStats), their growth since the arm's first
// reading. None when the target has no haproxy: a dashboard shows no
// data, never a zero.
var (
	familyLBRequests = Family{"herdbench_lb_requests_total", "counter",
		"HTTP requests the load balancer's backend received from its frontends (HAProxy's req_tot), by arm; none without a load balancer.",
		[]string{"arm"}}
	familyLBSends = Family{"herdbench_lb_sends_total", "counter",
		"Requests the load balancer sent to each server, retries and redispatches included (HAProxy's stot), by arm and server; sends / requests is its amplification; none without a load balancer.",
		[]string{"arm", "server"}}
	familyLBRetries = Family{"herdbench_lb_retries_total", "counter",
		"Retries the load balancer made, however they ended, to the same server or another (HAProxy's servers' stot beyond its req_tot, within its wretr + wredis: observe.LBStats.RetriesMade), by arm; none without a load balancer.",
		[]string{"arm"}}
	familyLBRedispatches = Family{"herdbench_lb_redispatches_total", "counter",
		"Requests sent to another server after one failed (HAProxy's backend wredis), by arm; none without a load balancer.",
		[]string{"arm"}}
	familyLBQueue = Family{"herdbench_lb_queue", "gauge",
		"Requests queued now (HAProxy's qcur) for each server at its maxconn, and for none yet (server BACKEND), by arm; none without a load balancer.",
		[]string{"arm", "server"}}
)

// lbMetrics are the load balancer's live series.
type lbMetrics struct {
	requests, sends, retries, redispatches *prometheus.CounterVec
	queue                                  *prometheus.GaugeVec
	last                                   map[string]observe.LBStats // each arm's last reading; guarded by Metrics.mu
}

var _ experiment.LBObserver = (*Metrics)(nil)

func newLBMetrics() *lbMetrics {
	return &lbMetrics{requests: familyLBRequests.counter(), sends: familyLBSends.counter(), retries: familyLBRetries.counter(),
		redispatches: familyLBRedispatches.counter(), queue: familyLBQueue.gauge(), last: map[string]observe.LBStats{}}
}

func (l *lbMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{l.requests, l.sends, l.retries, l.redispatches, l.queue}
}

// LB counts what HAProxy's counters grew by since the arm's last reading
// (the first makes each series, at zero). A backend whose req_tot went
// down was reloaded: its counters count from zero, as the results' do.
func (m *Metrics) LB(arm string, st observe.LBStats) {
	l := m.lb
	m.mu.Lock()
	prev, seen := l.last[arm]
	l.last[arm] = st
	m.mu.Unlock()
	if !seen {
		prev = st // the arm's first reading: the growth counts from here
	}
	reset := st.Backend.Requests < prev.Backend.Requests
	grew := func(p, c int64) float64 {
		switch {
		case reset:
			return float64(c)
		case c < p:
			return 0
		}
		return float64(c - p)
	}
	g := growth(prev, st, grew)
	l.requests.WithLabelValues(arm).Add(float64(g.Backend.Requests))
	l.retries.WithLabelValues(arm).Add(float64(g.RetriesMade()))
	l.redispatches.WithLabelValues(arm).Add(float64(g.Backend.Redispatches))
	l.queue.WithLabelValues(arm, "BACKEND").Set(float64(st.Backend.Queue))
	for i, r := range st.Servers { // growth's servers are st's, in its order
		l.sends.WithLabelValues(arm, r.Name).Add(float64(g.Servers[i].Sessions))
		l.queue.WithLabelValues(arm, r.Name).Set(float64(r.Queue))
	}
}

// growth is what the counters LB counts and RetriesMade reads grew by
// from prev to st, as grew counts each (a reload counting from zero; a
// server new since prev, from now), its servers st's in its order.
func growth(prev, st observe.LBStats, grew func(p, c int64) float64) observe.LBStats {
	n := func(p, c int64) int64 { return int64(grew(p, c)) }
	g := observe.LBStats{Backend: observe.LBRow{Requests: n(prev.Backend.Requests, st.Backend.Requests),
		Retries: n(prev.Backend.Retries, st.Backend.Retries), Redispatches: n(prev.Backend.Redispatches, st.Backend.Redispatches),
		ConnErrors: n(prev.Backend.ConnErrors, st.Backend.ConnErrors)}}
	before := map[string]observe.LBRow{}
	for _, r := range prev.Servers {
		before[r.Name] = r
	}
	for _, r := range st.Servers {
		p, ok := before[r.Name]
		if !ok && st.Backend.Requests >= prev.Backend.Requests { // a server new since the last reading, no reload
			p = r
		}
		g.Servers = append(g.Servers, observe.LBRow{Name: r.Name, Sessions: n(p.Sessions, r.Sessions), ConnErrors: n(p.ConnErrors, r.ConnErrors)})
	}
	return g
}
