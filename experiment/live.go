package experiment

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
)

// LiveWindow is how far back the live figures that stop conditions read
// look: the requests that completed, and the DB queries run, in the last
// second.
const LiveWindow = time.Second

// liveBucket is RowWidth of completed requests.
type liveBucket struct {
	at       int64 // completion row index from the recorder's T; the slot holds this row only
	outcomes [load.NumOutcomes]int64
	attempts int64
	hist     *hdrhistogram.Histogram
}

// liveSlots covers LiveWindow plus the row being filled.
const liveSlots = int(LiveWindow/result.RowWidth) + 1

// addLive files a record by when it completed; r.mu is held.
func (r *Recorder) addLive(rec load.Record, us int64) {
	i := result.RowIndex(rec.Intended.Add(rec.Latency), r.t)
	b := &r.live[int(((i%int64(liveSlots))+int64(liveSlots))%int64(liveSlots))]
	if b.hist == nil || b.at != i {
		if b.hist == nil {
			b.hist = result.NewHist(RowDigits)
		}
		b.hist.Reset()
		*b = liveBucket{at: i, hist: b.hist}
	}
	b.outcomes[rec.Outcome]++
	b.attempts += int64(rec.Attempts)
	_ = b.hist.RecordValue(us)
}

// addPhase files a record by the phase of its intended instant, for the
// observer of the recorder its bin is merged into; r.mu is held.
func (r *Recorder) addPhase(phase string, rec load.Record, us int64) {
	b := r.phases[phase]
	if b == nil {
		b = &liveBucket{hist: result.NewHist(RowDigits)}
		r.phases[phase] = b
	}
	b.outcomes[rec.Outcome]++
	b.attempts += int64(rec.Attempts)
	_ = b.hist.RecordValue(us)
}

// summary is a bin's requests of one phase for an observer.
func summary(l LiveState, h *hdrhistogram.PackedHistogram) Summary {
	s := Summary{Attempts: l.Attempts, Latencies: func(func(time.Duration, int64)) {}}
	copy(s.Outcomes[:], l.Outcomes)
	if h != nil {
		s.Latencies = func(each func(time.Duration, int64)) {
			h.ForEachBucket(func(v, n int64) bool {
				each(time.Duration(v)*time.Microsecond, n)
				return true
			})
		}
	}
	return s
}

// mergeLive adds a bin's live row at (completion row index) to the live
// window; r.mu is held. A row older than the one its slot holds now is
// past the window and left out, as addLive would have overwritten it.
func (r *Recorder) mergeLive(at int64, l LiveState, h *hdrhistogram.PackedHistogram) {
	b := &r.live[int(((at%int64(liveSlots))+int64(liveSlots))%int64(liveSlots))]
	if b.hist != nil && b.at > at {
		return
	}
	if b.hist == nil || b.at != at {
		if b.hist == nil {
			b.hist = result.NewHist(RowDigits)
		}
		b.hist.Reset()
		*b = liveBucket{at: at, hist: b.hist}
	}
	for o, n := range l.Outcomes {
		b.outcomes[o] += n
	}
	b.attempts += l.Attempts
	mergeInto(b.hist, h)
}

// liveFigures are the requests completed in the LiveWindow before now, as
// gate figures.
func (r *Recorder) liveFigures(now time.Time) map[string]*float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := result.RowIndex(now, r.t)
	first := last - int64(LiveWindow/result.RowWidth) + 1
	hist := result.NewHist(RowDigits)
	var outcomes [load.NumOutcomes]int64
	var attempts, requests int64
	for _, b := range r.live {
		if b.hist == nil || b.at < first || b.at > last {
			continue
		}
		for o, n := range b.outcomes {
			outcomes[o] += n
			requests += n
		}
		attempts += b.attempts
		hist.Merge(b.hist)
	}
	f := map[string]*float64{}
	set := func(path string, v float64) { f[path] = &v }
	set("http.requests", float64(requests))
	set("http.ok", float64(outcomes[load.OK]))
	set("http.status_4xx", float64(outcomes[load.Status4xx]))
	for _, o := range load.Outcomes {
		if o != load.OK && o != load.Status4xx {
			set("http.errors."+o.String(), float64(outcomes[o]))
		}
	}
	set("retries.attempts", float64(attempts))
	if requests > 0 {
		set("http.drop_rate", float64(requests-outcomes[load.OK]-outcomes[load.Status4xx])/float64(requests))
		set("http.p50_ms", result.Millis(hist.ValueAtQuantile(50)))
		set("http.p90_ms", result.Millis(hist.ValueAtQuantile(90)))
		set("http.p99_ms", result.Millis(hist.ValueAtQuantile(99)))
		set("http.max_ms", result.Millis(hist.Max()))
		set("retries.amplification", float64(attempts)/float64(requests))
	}
	return f
}

// checkAbort returns the first condition of conds that holds on the live
// figures, with the value it measured, or false. A figure without a value
// (no request completed in the window) holds no condition.
func checkAbort(conds []gates.Gate, figures map[string]*float64) (gates.Gate, float64, bool) {
	for _, c := range conds {
		if v := figures[c.Path]; v != nil && c.Holds(*v) {
			return c, *v, true
		}
	}
	return gates.Gate{}, 0, false
}

// dbRate is the item queries per second from the oldest of recent samples
// within LiveWindow of the newest to the newest.
func dbRate(recent []observe.Sample) (float64, bool) {
	if len(recent) < 2 {
		return 0, false
	}
	newest := recent[len(recent)-1]
	first := len(recent) - 1
	for first > 0 && newest.At.Sub(recent[first-1].At) <= LiveWindow {
		first--
	}
	oldest := recent[first]
	dt := newest.At.Sub(oldest.At).Seconds()
	if dt <= 0 {
		return 0, false
	}
	// summed along the samples between, so a restart on the way counts right
	calls := counter{func(s observe.Sample) int64 { return s.Calls }, observe.DBRestarted}
	return float64(span(oldest, newest, recent[first+1:len(recent)-1], calls)) / dt, true
}
