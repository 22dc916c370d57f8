package model

import (
	"slices"
	"time"
)

// LookAsideEscape is one run's escape: Stuck when the judge read it
// metastable before the horizon, so the load stepped down; Share the
// first step's share that came back, 0 when none did.
type LookAsideEscape struct {
	Stuck bool
	Share float64
}

// EscapeRun runs the herd of hot expired keys with the draw of seed,
// judged live; once it reads metastable, the load steps down by shares
// (decreasing shares of the rate, --escape's: docs/stampede.md, "The
// escape load"), each step up to limit long, and the first step with a
// hold of its rows in band (bandAt its rate) is the escape. A run judged
// metastable only at its horizon has no time left to step: not Stuck.
func (la LookAside) EscapeRun(hot int, seed uint64, shares []float64, limit time.Duration) LookAsideEscape {
	v := la.Run(hot, seed)
	if !v.Tips || v.JudgedAt >= la.Horizon || len(shares) == 0 {
		return LookAsideEscape{}
	}
	ext := la // the run again, to the end of its last step and its answers
	ext.Horizon = v.JudgedAt + time.Duration(len(shares))*limit + la.Timeout
	s := ext.newSim(hot, seed)
	from := v.JudgedAt.Seconds()
	for i, share := range shares {
		s.stepDown(from+float64(i)*limit.Seconds(), share*la.Rate)
	}
	s.advance(ext.Horizon.Seconds())
	rows := int(limit / LookAsideRow)
	first := int(v.JudgedAt / LookAsideRow)
	for i, share := range shares {
		start := first + i*rows
		for r := start; r+laHoldRows <= start+rows; r++ {
			if ext.bandAt(s.tl, r, share*la.Rate) {
				return LookAsideEscape{Stuck: true, Share: share}
			}
		}
	}
	return LookAsideEscape{Stuck: true}
}

// EscapeProbe is the escape of Runs runs, each its own draw: nil when
// fewer than half of them were stuck (it tips, if at all, too late to
// step down), else the median share of the stuck runs, a run that found
// none counting below every step (0: the median found none), as the
// repeats' median counts it.
func (la LookAside) EscapeProbe(hot int, shares []float64, limit time.Duration) *float64 {
	var found []float64
	for i := range la.Runs {
		if e := la.EscapeRun(hot, la.Seed+uint64(i), shares, limit); e.Stuck {
			found = append(found, e.Share)
		}
	}
	if 2*len(found) < la.Runs {
		return nil
	}
	slices.Sort(found)
	m := found[(len(found)-1)/2]
	return &m
}
