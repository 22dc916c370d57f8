package experiment

import (
	"math"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
)

// Recorder files each request by its intended send time: into a timeline
// row, and into the baseline [T-before, T) or the measured window
// [T, T+after).
type Recorder struct {
	t    time.Time // T
	from time.Time // start of the timeline: T - before
	end  time.Time // end of the timeline: T + after

	mu       sync.Mutex
	rows     map[int64]*clientRow
	after    *hdrhistogram.Histogram
	outcomes map[load.Outcome]int64  // from T
	attempts int64                   // from T
	hedges   int64                   // from T
	critical *classAcc               // from T: requests marked critical; nil when none are
	stale    int64                   // from T: ok, but answered with a stale copy
	local    int64                   // from T: ok, answered from a replica's in-process tier
	baseline *hdrhistogram.Histogram // [T - before, T)
	sent     int64                   // every record, for progress
	sends    int64                   // every record's attempts, warmup included: the clients' layer
	live     [liveSlots]liveBucket   // the last LiveWindow of completed requests, for stop conditions
	liveOn   bool                    // the plan has stop conditions: keep live
	gen      genAcc                  // the generator's own figures, from T - before to the end
	classes  []*classRec             // each request class's own, by Record.Class; nil: one class
	filed    filedMark               // how far every request is filed, for the live judge
	// a bin's recorder: every request by phase, for the observer
	// (BinObserver) of the recorder the bin is merged into
	phases   map[string]*liveBucket
	observer func(phase string, s Summary) // the merged bins' requests go to it; nil: none
}

// genAcc is how the generator kept its schedule: requests intended, those
// it sent, and how late they left.
type genAcc struct {
	intended, sent int64
	lag            *hdrhistogram.Histogram
}

// classAcc counts a subset of the requests.
type classAcc struct {
	requests, ok, shed int64
	hist               *hdrhistogram.Histogram
}

type clientRow struct {
	requests, ok, attempts, unsent int64
	hist                           *hdrhistogram.Histogram
}

// newRecorder files requests around T; with critical, the requests marked
// critical are also counted apart.
func NewRecorder(t time.Time, before, after time.Duration, critical bool) *Recorder {
	r := &Recorder{t: t, from: t.Add(-before), end: t.Add(after), rows: map[int64]*clientRow{}, outcomes: map[load.Outcome]int64{},
		after: result.NewHist(BinDigits), baseline: result.NewHist(BinDigits), gen: genAcc{lag: result.NewHist(BinDigits)}}
	if critical {
		r.critical = &classAcc{hist: result.NewHist(BinDigits)}
	}
	return r
}

func (r *Recorder) Add(rec load.Record) {
	us := min(max(rec.Latency.Microseconds(), 1), result.MaxLatencyUS)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent++
	r.sends += int64(rec.Attempts)
	r.filed.add(rec.Seq, rec.Intended)
	if r.liveOn && rec.Outcome != load.Unsent {
		r.addLive(rec, us)
	}
	if r.phases != nil && rec.Intended.Before(r.end) { // as observed, Observer's rule
		r.addPhase(phaseOf(rec.Intended, r.from, r.t), rec, us)
	}
	// attempts land in the row they were sent in: retry waves show where
	// they happened, whichever request they belong to
	for _, at := range rec.SentAt {
		if !at.Before(r.from) && at.Before(r.end) {
			r.row(result.RowIndex(at, r.t)).attempts++
		}
	}
	if rec.Intended.Before(r.from) || !rec.Intended.Before(r.end) {
		return // warmup, or the pacer's last tick at the very end
	}
	row := r.row(result.RowIndex(rec.Intended, r.t))
	row.requests++
	r.gen.intended++
	if rec.Class >= 0 && rec.Class < len(r.classes) {
		r.classes[rec.Class].add(rec, us, r.t)
	}
	if rec.Outcome == load.Unsent {
		// owed and never sent: a request, dropped, with no latency
		row.unsent++
		if !rec.Intended.Before(r.t) {
			r.outcomes[load.Unsent]++
		}
		return
	}
	r.gen.sent++
	_ = r.gen.lag.RecordValue(max(rec.Left.Sub(rec.Intended).Microseconds(), 0))
	if rec.Outcome.Answered() { // a 4xx is an answer, not a drop: the rows' goodput counts it
		row.ok++
	}
	_ = row.hist.RecordValue(us)
	if rec.Intended.Before(r.t) {
		_ = r.baseline.RecordValue(us)
		return
	}
	_ = r.after.RecordValue(us)
	r.outcomes[rec.Outcome]++
	r.attempts += int64(rec.Attempts)
	r.hedges += int64(rec.Hedges)
	if c := r.critical; c != nil && rec.Critical {
		c.requests++
		switch rec.Outcome {
		case load.OK:
			c.ok++
		case load.Shed:
			c.shed++
		}
		_ = c.hist.RecordValue(us)
	}
	if rec.Outcome == load.OK {
		switch rec.Cache {
		case "stale":
			r.stale++
		case "local":
			r.local++
		}
	}
}

// row returns timeline row i, made on first use.
func (r *Recorder) row(i int64) *clientRow {
	row := r.rows[i]
	if row == nil {
		row = &clientRow{hist: result.NewHist(RowDigits)}
		r.rows[i] = row
	}
	return row
}

func (r *Recorder) requests() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}

// http summarises the requests intended from T on.
func (r *Recorder) http() result.HTTP {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := httpOf(r.outcomes, r.after)
	h.Stale, h.Local = r.stale, r.local
	if c := r.critical; c != nil {
		h.Critical = &result.Class{Requests: c.requests, OK: c.ok, Shed: c.shed}
		if c.requests > 0 {
			h.Critical.DropRate = float64(c.requests-c.ok) / float64(c.requests)
			h.Critical.P99MS = result.Millis(c.hist.ValueAtQuantile(99))
		}
	}
	return h
}

// httpOf sums up requests by outcome and the latencies of those answered.
func httpOf(outcomes map[load.Outcome]int64, after *hdrhistogram.Histogram) result.HTTP {
	h := result.HTTP{
		OK:        outcomes[load.OK],
		Status4xx: outcomes[load.Status4xx],
		Errors: result.Errors{
			Timeout: outcomes[load.Timeout],
			Conn:    outcomes[load.Conn],
			E5xx:    outcomes[load.Error5xx],
			Shed:    outcomes[load.Shed],
			Other:   outcomes[load.Other],

			Throttled:     outcomes[load.Throttled],
			ClientBreaker: outcomes[load.BreakerOpen],
			Unsent:        outcomes[load.Unsent],
		},
	}
	for _, n := range outcomes {
		h.Requests += n
	}
	if h.Requests > 0 {
		h.DropRate = float64(h.Requests-h.OK-h.Status4xx) / float64(h.Requests)
		h.P50MS = result.Millis(after.ValueAtQuantile(50))
		h.P90MS = result.Millis(after.ValueAtQuantile(90))
		h.P99MS = result.Millis(after.ValueAtQuantile(99))
		h.P999MS = result.Millis(after.ValueAtQuantile(99.9))
		h.MaxMS = result.Millis(after.Max())
	}
	return h
}

// Saturation: the generator, not the service, was the bottleneck when one
// request in ten left later than SaturatedLag, or fewer than SaturatedSent
// of the intended requests left at all. The rule reads the 90th percentile,
// not the 99th: a generator that keeps up but is descheduled for a few tens
// of milliseconds on a shared machine shows in lag_p99_ms (and a gate on it
// can fail the run), while one that cannot keep up falls behind on most
// requests.
const (
	SaturatedLag  = 10 * time.Millisecond
	SaturatedSent = 0.99
)

// MaterialLagShare is when the generator's own lateness is a material part
// of an arm's p99: the p99 counts from each request's intended send time,
// so it holds the generator's lag as well as the service's time, and an
// arm whose lag p99 is this share of its p99 or more reports a p99 that is
// partly herdbench's (LagShare; the reports mark it). Saturation, judged
// at the lag's p90, misses a generator that keeps up on most requests and
// falls behind at T, the instant the herd is measured.
const MaterialLagShare = 0.10

// generator summarises how the generator kept its schedule from T - before
// to the end; window is that span.
func (r *Recorder) generator(window time.Duration) result.LoadFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := result.LoadFigures{Intended: r.gen.intended, Sent: r.gen.sent}
	if window > 0 {
		g.AchievedRate = result.Round2(float64(g.Sent) / window.Seconds())
	}
	if g.Sent > 0 {
		g.LagP50MS = result.Millis(r.gen.lag.ValueAtQuantile(50))
		g.LagP90MS = result.Millis(r.gen.lag.ValueAtQuantile(90))
		g.LagP99MS = result.Millis(r.gen.lag.ValueAtQuantile(99))
	}
	g.Saturated = g.LagP90MS > float64(SaturatedLag.Milliseconds()) ||
		(g.Intended > 0 && float64(g.Sent) < SaturatedSent*float64(g.Intended))
	return g
}

// retries summarises the attempts of the requests intended from T.
func (r *Recorder) retries() result.Retries {
	r.mu.Lock()
	defer r.mu.Unlock()
	var requests int64 // sent: an unsent request met no retry policy
	for o, n := range r.outcomes {
		if o != load.Unsent {
			requests += n
		}
	}
	res := result.Retries{Attempts: r.attempts, Hedges: r.hedges}
	if requests > 0 {
		res.Amplification = math.Round(float64(r.attempts)/float64(requests)*1000) / 1000
	}
	return res
}

// layer is what the clients asked for and sent over the whole load,
// warmup included: the top of a call chain.
func (r *Recorder) layer() (requests, attempts int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent, r.sends
}
