package model

import (
	"math"
	"time"
)

// RowWidth is the verdict's timeline row (experiment/result.RowWidth):
// a measured recovery_ms is the start of a row, counted from T.
const RowWidth = 100 * time.Millisecond

// Band is the verdict's rule for "back" (experiment/verdict: BandOf,
// RecoveryHold, RelapseSpan; TestModelReadsRecoveryAsTheVerdict there
// holds DefaultOptions.Band to its constants), so that the model's
// recovery is read as the measured recovery_ms it is set beside: from
// the first row at or after the fault's end whose Hold of requests, by
// the time they were begun, has its p99 within Ratio of the baseline's
// (or P99Floor above it) and the database's mean queries a second
// within Ratio of the baseline's (or QPSFloor above it), and after which
// no run of holds out of band lasts Relapse. The baseline is the
// model's own over the Options' Lead before the fault, as the verdict's
// is the before window ([T - before, T)): its p99 holds the requests
// begun just before the fault whose replies the fault held (a measured
// one holds fewer when the fault begins a little after T, as slowdb's
// toxic does, added by a call to toxiproxy's API), and no noise of a
// loaded machine; its database q/s are the model's attempts a second
// times Options.DBPerAttempt.
//
// A Band with Goodput set reads "back" by the goodput alone, as a
// simulation's "collapsed" is (Brooker's): from the first step at which
// the goodput over the Hold before it is at least Goodput of the offered
// rate, and stays so to the end.
type Band struct {
	Hold     time.Duration
	Goodput  float64
	Relapse  time.Duration
	Ratio    float64
	QPSFloor float64 // queries a second
	P99Floor time.Duration
}

// VerdictBand is experiment/verdict's, as of herdbench.results/v2.
var VerdictBand = Band{Hold: time.Second, Relapse: 1500 * time.Millisecond, Ratio: 1.5, QPSFloor: 20, P99Floor: 20 * time.Millisecond}

// p99Of is the 99th percentile latency, in steps, of the requests begun
// over steps [from, to): math.MaxInt when fewer than 99% of them were
// answered on their first attempt.
func p99Of(tr Trace, from, to int) int {
	var begun float64
	var by []float64
	for s := from; s < to; s++ {
		begun += tr.Offered[s]
		for k, r := range tr.First[s] {
			for len(by) <= k {
				by = append(by, 0)
			}
			by[k] += r
		}
	}
	var cum float64
	for k, r := range by {
		if cum += r; cum >= 0.99*begun*(1-1e-9) {
			return k
		}
	}
	return math.MaxInt
}

// inBand says whether the hold over steps [from, to) is within band:
// at least 99% of its requests answered on their first attempt within
// p99Max steps, and the database's queries a second at most qpsMax.
func inBand(tr Trace, from, to, p99Max int, qpsMax float64) bool {
	var begun, fast, qps float64
	for s := from; s < to; s++ {
		begun += tr.Offered[s]
		qps += tr.Started[s] / float64(to-from)
		for k, r := range tr.First[s] {
			if k <= p99Max {
				fast += r
			}
		}
	}
	return qps <= qpsMax && fast >= 0.99*begun*(1-1e-9)
}

// recovery reads a trace as the verdict reads a timeline: the time from
// the fault's end to the start of the first row (rows of RowWidth from
// the fault's start) whose hold is within band and after which no
// stretch of holds out of band lasts the band's Relapse; false when
// none is by the trace's end, or the service was not within band before
// the fault.
func recovery(tr Trace, o Options) (time.Duration, bool) {
	b := o.Band
	if b.Goodput > 0 {
		return goodputRecovery(tr, b)
	}
	hold, row := max(1, steps(b.Hold)), max(1, steps(RowWidth))
	from := max(0, tr.Start-steps(o.Lead))
	p99 := p99Of(tr, from, tr.Start)
	if p99 == math.MaxInt || tr.Start <= from {
		return 0, false
	}
	var qps float64
	for s := from; s < tr.Start; s++ {
		qps += tr.Started[s] / float64(tr.Start-from)
	}
	if o.DBPerAttempt > 0 {
		qps *= o.DBPerAttempt
	}
	p99Max := int(math.Max(b.Ratio*float64(p99), float64(p99+steps(b.P99Floor))))
	qpsMax := math.Max(b.Ratio*qps, qps+b.QPSFloor)
	run := max(1, steps(b.Relapse)/row)
	held, out := -1, 0
	first := tr.Start + (tr.End-tr.Start+row-1)/row*row
	for i := first; i+hold <= len(tr.Offered); i += row {
		if inBand(tr, i, i+hold, p99Max, qpsMax) {
			if held < 0 {
				held = i
			}
			out = 0
			continue
		}
		if out++; out >= run {
			held = -1
		}
	}
	if held < 0 {
		return 0, false
	}
	return time.Duration(held-tr.End) * Step, true
}

// goodputRecovery reads a trace by its goodput alone: the time from the
// fault's end until the goodput over the last b.Hold is at least
// b.Goodput × the offered rate and stays so to the end; false when it
// is not by then.
func goodputRecovery(tr Trace, b Band) (time.Duration, bool) {
	w := max(1, steps(b.Hold))
	n := len(tr.Goodput)
	sum := 0.0
	back := -1
	for t := range n {
		sum += tr.Goodput[t]
		if t >= w {
			sum -= tr.Goodput[t-w]
		}
		in := t >= w-1 && sum/float64(w) >= b.Goodput*tr.Offered[t]
		switch {
		case in && back < 0:
			back = t
		case !in:
			back = -1
		}
	}
	if back < 0 || back > n-w {
		return 0, false
	}
	return time.Duration(max(0, back-tr.End)) * Step, true
}
