package experiment

import (
	"maps"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
)

func summarize(p plan.Plan, arm arm.Arm, t time.Time, s0, sT, end observe.Sample, samples []observe.Sample, rec *Recorder) *result.ArmResult {
	samples = append(samples, end)
	res := &result.ArmResult{Name: arm.Name, Select: arm.Select, T: t.UTC(), HTTP: rec.http(), Retries: rec.retries(),
		Load: rec.generator(time.Duration(p.Before + p.After))}

	before := time.Duration(p.Before)
	calls := counter{func(s observe.Sample) int64 { return s.Calls }, observe.DBRestarted}
	res.DB = &result.DB{
		Queries:      span(sT, end, samples, calls),
		QueriesTotal: span(s0, end, samples, calls),
		PeakQPS:      result.Round2(peakQPS(samples, time.Second)),
	}
	if sB, ok := nearest(samples, t.Add(-before)); ok && sT.At.After(sB.At) {
		res.DB.BaselineQPS = result.Round2(float64(span(sB, sT, samples, calls)) / sT.At.Sub(sB.At).Seconds())
	}
	for _, s := range samples {
		res.DB.PeakConnections = max(res.DB.PeakConnections, s.Connections)
		res.DB.NewConnections = max(res.DB.NewConnections, s.NewConnections)
	}
	// MySQL counts the connections a user opened, from T on (Postgres'
	// backends started after T are NewConnections already)
	opened := span(sT, end, samples, counter{func(s observe.Sample) int64 { return s.ConnectionsOpened }, observe.DBRestarted})
	res.DB.NewConnections = max(res.DB.NewConnections, opened)

	redisCounter := func(f func(observe.Sample) int64) counter { return counter{f, observe.CacheRestarted} }
	res.Cache = &result.Cache{
		Hits:                span(sT, end, samples, redisCounter(func(s observe.Sample) int64 { return s.Hits })),
		Misses:              span(sT, end, samples, redisCounter(func(s observe.Sample) int64 { return s.Misses })),
		Expired:             span(sT, end, samples, redisCounter(func(s observe.Sample) int64 { return s.Expired })),
		ConnectionsReceived: span(sT, end, samples, redisCounter(func(s observe.Sample) int64 { return s.ConnectionsReceived })),
	}
	if reads := res.Cache.Hits + res.Cache.Misses; reads > 0 {
		r := result.Round4(float64(res.Cache.Hits) / float64(reads))
		res.Cache.HitRatio = &r
	}

	res.Timeline, res.RowHists = timeline(p, t, samples, rec)
	above := result.AboveBaseline(res.Timeline, res.DB.BaselineQPS)
	res.DB.AboveBaselineMS = &above
	res.BaselineP99 = result.Millis(rec.baseline.ValueAtQuantile(99)) // judge reads it
	return res
}

// drained sets the DB queries the database counted from the load's end
// (loadEnd, read as the drain began) to the arm's last snapshot, and
// their share of db.queries.
func drained(db *result.DB, loadEnd, end observe.Sample, samples []observe.Sample) {
	n := span(loadEnd, end, samples, counter{func(s observe.Sample) int64 { return s.Calls }, observe.DBRestarted})
	if n <= 0 || db.Queries <= 0 {
		return
	}
	db.DrainQueries = n
	db.DrainShare = result.Round4(float64(db.DrainQueries) / float64(db.Queries))
}

// timeline builds one row per RowWidth from T - before to the end: server
// figures from the samples that fall in the row (deltas to the sample
// before), client figures from the requests intended in it.
func timeline(p plan.Plan, t time.Time, samples []observe.Sample, rec *Recorder) ([]result.Row, []*hdrhistogram.Histogram) {
	first := result.RowIndex(t.Add(-time.Duration(p.Before)), t)
	last := result.RowIndex(t.Add(time.Duration(p.After)), t) - 1
	rows := make([]result.Row, 0, last-first+1)
	hists := make([]*hdrhistogram.Histogram, 0, last-first+1)
	server := serverRows(samples, t)
	// A row no sample fell in (the sampler ran late) takes the rate of the
	// next sample's interval, which spans it; the counts stay with that row.
	for i := last; i >= first; i-- {
		if next := server[i+1]; server[i] == nil && next != nil {
			server[i] = &acc{conns: next.conns, rate: next.rateOf(), queueDepth: next.queueDepth}
		}
	}
	lb := lbRows(samples, t)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i := first; i <= last; i++ {
		row := result.Row{TMS: i * result.RowWidth.Milliseconds()}
		if l := lb[i]; l != nil {
			row.LBRequests, row.LBSent, row.LBServers, row.LBQueue, row.LBWeights = l.LBRequests, l.LBSent, l.LBServers, l.LBQueue, l.LBWeights
		}
		if a := server[i]; a != nil {
			row.DBQPS = result.Round2(a.rateOf())
			row.Hits, row.Misses, row.Connections = a.hits, a.misses, a.conns
			row.Edge, row.EdgeAttempts, row.API, row.DBAttempts = a.edge, a.edgeAttempts, a.api, a.dbAttempts
			row.LockWaits, row.QueueDepth = a.lockWaits, a.queueDepth
			row.Counts = a.counts
			row.Replicas = a.replicas
		}
		var hist *hdrhistogram.Histogram // a copy: the recorder goes on filing while an arm is judged live
		if c := rec.rows[i]; c != nil {
			row.Requests, row.OK, row.Attempts, row.Unsent = c.requests, c.ok, c.attempts, c.unsent
			row.P99MS = result.Millis(c.hist.ValueAtQuantile(99))
			hist = hdrhistogram.Import(c.hist.Export())
		}
		rows = append(rows, row)
		hists = append(hists, hist)
	}
	return rows, hists
}

// serverRows gathers the samples' growth by the row each sample falls
// in: every counter's since the sample before, the servers' since the last
// sample that read them all, each replica's since its last reading.
func serverRows(samples []observe.Sample, t time.Time) map[int64]*acc {
	server := map[int64]*acc{}
	var servers *observe.Servers   // the last sample's that read them all
	replicas := map[string]int64{} // each replica's last reading
	if len(samples) > 0 && samples[0].Servers != nil {
		if !samples[0].Servers.Partial {
			servers = samples[0].Servers
		}
		maps.Copy(replicas, samples[0].Servers.Replicas)
	}
	for i := 1; i < len(samples); i++ {
		cur, prev := samples[i], samples[i-1]
		r := result.RowIndex(cur.At, t)
		a := server[r]
		if a == nil {
			a = &acc{}
			server[r] = a
		}
		a.calls += step(prev.Calls, cur.Calls, observe.DBRestarted(prev, cur))
		a.hits += step(prev.Hits, cur.Hits, observe.CacheRestarted(prev, cur))
		a.misses += step(prev.Misses, cur.Misses, observe.CacheRestarted(prev, cur))
		a.dt += cur.At.Sub(prev.At)
		a.conns = cur.Connections
		a.lockWaits, a.queueDepth = max(a.lockWaits, cur.LockWaits), cur.QueueDepth
		if c := cur.Servers; c != nil {
			if p := servers; p != nil && !c.Partial {
				a.addServers(p, c)
			}
			a.addReplicas(replicas, c.Replicas)
			if !c.Partial {
				servers = c
			}
		}
	}
	return server
}

// acc gathers the sample deltas that fall in one timeline row.
type acc struct {
	calls, hits, misses int64
	edge, edgeAttempts  int64 // a call chain's layers (Sample.Servers)
	api, dbAttempts     int64
	counts              map[string]int64 // the subject's own (Sample.Servers): the loop's figures
	replicas            map[string]int64 // each API replica's requests
	dt                  time.Duration
	conns               int64
	lockWaits           int64   // the most in one sample
	queueDepth          int64   // the last sample's
	rate                float64 // set for a row without its own sample
}

// addServers adds what the servers' counters grew by from p to c. A sum
// that went down had a replica restart: its counters count from zero; a
// sample that could not read them leaves their growth to the next that
// did.
func (a *acc) addServers(p, c *observe.Servers) {
	a.edge += step(p.Edge, c.Edge, c.Edge < p.Edge)
	a.edgeAttempts += step(p.EdgeAttempts, c.EdgeAttempts, c.EdgeAttempts < p.EdgeAttempts)
	a.api += step(p.API, c.API, c.API < p.API)
	a.dbAttempts += step(p.DBAttempts, c.DBAttempts, c.DBAttempts < p.DBAttempts)
	for k, n := range c.Counts {
		if a.counts == nil {
			a.counts = map[string]int64{}
		}
		a.counts[k] += step(p.Counts[k], n, n < p.Counts[k])
	}
}

// addReplicas adds each replica's growth since its last reading (last,
// which it updates); a replica that was not read (restarting) adds
// nothing to the row, and its growth goes to its next reading.
func (a *acc) addReplicas(last, cur map[string]int64) {
	for name, n := range cur {
		if a.replicas == nil {
			a.replicas = map[string]int64{}
		}
		if prev, seen := last[name]; seen {
			a.replicas[name] += step(prev, n, n < prev)
		}
		last[name] = n
	}
}

func (a *acc) rateOf() float64 {
	if a.dt > 0 {
		return float64(a.calls) / a.dt.Seconds()
	}
	return a.rate
}

// step is how much a counter grew from prev to cur. When its server
// restarted in between, the counter started again at zero, so it grew by
// cur; a decrease without a restart is not growth.
func step(prev, cur int64, restarted bool) int64 {
	switch {
	case restarted:
		return cur
	case cur < prev:
		return 0
	}
	return cur - prev
}

// counter is a cumulative field of a sample and how its server's restart
// shows.
type counter struct {
	field     func(observe.Sample) int64
	restarted func(prev, cur observe.Sample) bool
}

// span is how much c grew from one snapshot to another, summed along the
// samples taken between them, so a restart on the way counts right.
func span(from, to observe.Sample, samples []observe.Sample, c counter) int64 {
	var sum int64
	prev := from
	for _, s := range samples {
		if s.At.After(from.At) && s.At.Before(to.At) {
			sum += step(c.field(prev), c.field(s), c.restarted(prev, s))
			prev = s
		}
	}
	return sum + step(c.field(prev), c.field(to), c.restarted(prev, to))
}

// peakQPS is the highest rate over any window of about w between samples.
func peakQPS(samples []observe.Sample, w time.Duration) float64 {
	var peak float64
	j := 0
	for i := range samples {
		for j < i && samples[i].At.Sub(samples[j+1].At) >= w {
			j++
		}
		if d := samples[i].At.Sub(samples[j].At); d >= w*9/10 {
			n := span(samples[j], samples[i], samples[j+1:i], counter{func(s observe.Sample) int64 { return s.Calls }, observe.DBRestarted})
			peak = max(peak, float64(n)/d.Seconds())
		}
	}
	return peak
}

// nearest returns the sample closest to at.
func nearest(samples []observe.Sample, at time.Time) (observe.Sample, bool) {
	var best observe.Sample
	bestD := time.Duration(math.MaxInt64)
	for _, s := range samples {
		d := s.At.Sub(at)
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = s, d
		}
	}
	return best, bestD != time.Duration(math.MaxInt64)
}
