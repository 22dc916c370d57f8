package model

import "time"

// LookAsideVerdict is what the verdict's rule (results v2,
// docs/stampede.md, "The verdict"), judged live every 500 ms as a sweep's
// probe is, makes of a run: the arm stops once it reads recovered
// (--after auto) or metastable (--abort-on), or at the horizon.
type LookAsideVerdict struct {
	// Tips: the sweep's "tipped": judged metastable, or not back by the
	// horizon
	Tips bool
	// Stuck: the last hold judged answered under the band's goodput (90%
	// of the rate): the expired keys' requests failing, the cache not
	// refilled; a run that Tips without it is out of band by its p99 or
	// its database work alone, every request answered
	Stuck    bool
	Recovery time.Duration // from T to the first row of the hold back in band for good; when not Tips
	JudgedAt time.Duration // when the arm stopped, from T
	Goodput  float64       // the last hold judged: its goodput over the rate
}

// The verdict's hold, relapse and database floor are VerdictBand's, the
// constants experiment/verdict's test holds the model's to.
var (
	laHoldRows    = int(VerdictBand.Hold / LookAsideRow)                   // a hold: 1 s of rows
	laRelapseRows = int(VerdictBand.Relapse / LookAsideRow)                // a relapse: 1.5 s of holds out of band in a row
	laTrendRows   = 3 * laHoldRows                                         // the trend's 3 s
	laHoldQueries = int(VerdictBand.QPSFloor * VerdictBand.Hold.Seconds()) // over a baseline of 0 q/s: 20 q/s for a hold
)

const laJudgeEvery = 500 * time.Millisecond

// Judge applies the verdict's rule to tl. The baseline is the cache's
// before T: every request answered, at a hit's latency, and no database
// work (every key cached). A hold is within band when its goodput is at
// least 90% of the rate less one, at most 1% of its requests are slow
// (its p99 within LookAsideP99Band of the baseline's), and its database completed
// at most 20 queries (50% over a baseline of 0, or 20 q/s).
func (la LookAside) Judge(tl LookAsideTimeline) LookAsideVerdict {
	return la.judge(&tl, func(time.Duration) {})
}

// judge is Judge on a timeline that ready(j) completes as far as the
// judge at j reads.
func (la LookAside) judge(tl *LookAsideTimeline, ready func(j time.Duration)) LookAsideVerdict {
	n := len(tl.Sent)
	in := make([]bool, max(n-laHoldRows+1, 0)) // in[r]: the hold that begins at row r
	settle, banded := int(la.Settle()/LookAsideRow), 0
	for j := laJudgeEvery; ; j += laJudgeEvery {
		ready(j)
		avail := int((j - la.Timeout) / LookAsideRow) // rows whose requests have all been answered
		end := j >= la.Horizon
		if end {
			avail = n // the drain answers the rest
		}
		for ; banded+laHoldRows <= avail; banded++ {
			in[banded] = la.band(tl, banded)
		}
		v := LookAsideVerdict{JudgedAt: j}
		if avail >= laHoldRows {
			v.Goodput = float64(sumInts(tl.OK[avail-laHoldRows:avail])) / la.Rate
			v.Stuck = v.Goodput < 0.9-1/la.Rate
		}
		if r, ok := laRecovered(in, avail); ok {
			v.Recovery = time.Duration(r) * LookAsideRow
			return v
		}
		last := avail - laHoldRows
		if end || (last >= settle && !in[last] && la.rise(tl.OK[avail-laTrendRows:avail]) < 0.1*la.Rate) {
			v.Tips = true
			return v
		}
	}
}

// Back is when the whole of tl came back to stay, from T, by the
// verdict's band: the first hold within it with no relapse after it, to
// the horizon; ok false when none. It is the recovery of an arm run to
// its horizon with no stop condition (--after MAX), as v1's probes ran.
func (la LookAside) Back(tl LookAsideTimeline) (time.Duration, bool) {
	in := make([]bool, max(len(tl.Sent)-laHoldRows+1, 0))
	for r := range in {
		in[r] = la.band(&tl, r)
	}
	r, ok := laRecovered(in, len(tl.Sent))
	return time.Duration(r) * LookAsideRow, ok
}

// band: the hold that begins at row r is within the verdict's band.
func (la LookAside) band(tl *LookAsideTimeline, r int) bool { return la.bandAt(tl, r, la.Rate) }

// bandAt is band with the goodput's bound at rate: an escape's step's
// (its share of the rate).
func (la LookAside) bandAt(tl *LookAsideTimeline, r int, rate float64) bool {
	sent, ok, slow, db := 0, 0, 0, 0
	for i := r; i < r+laHoldRows; i++ {
		sent, ok, slow, db = sent+tl.Sent[i], ok+tl.OK[i], slow+tl.Slow[i], db+tl.DB[i]
	}
	return float64(ok) >= 0.9*rate-1 && slow <= sent/100 && db <= laHoldQueries
}

// laRecovered is the first row whose hold, among the holds of the first
// avail rows, is within band with no relapse after it.
func laRecovered(in []bool, avail int) (int, bool) {
	holds := min(avail-laHoldRows+1, len(in))
	for r := 0; r < holds; r++ {
		if !in[r] {
			continue
		}
		out, relapse := 0, false
		for s := r + 1; s < holds && !relapse; s++ {
			if in[s] {
				out = 0
			} else {
				out++
			}
			relapse = out >= laRelapseRows
		}
		if !relapse {
			return r, true
		}
	}
	return 0, false
}

// rise is how much a least-squares line through the rows' goodput (a
// second) rises over them: the verdict's trend.
func (la LookAside) rise(ok []int) float64 {
	m := float64(len(ok))
	var sx, sy, sxx, sxy float64
	for i, v := range ok {
		x, y := float64(i), float64(v)/LookAsideRow.Seconds()
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (m*sxy - sx*sy) / (m*sxx - sx*sx) // a row
	return slope * m
}

func sumInts(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
