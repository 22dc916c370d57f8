package verdict

import (
	"time"

	"github.com/herdbench/herdbench/experiment/result"
)

// Sources says which of the loop's sources an arm has.
type Sources struct {
	DB, Cache bool
	Replicas  bool // the subject's row counters (result.DeclareRowCounters)
}

// LoopOf is rows' loop, cut at T and at endedMS as windowsOf cuts them;
// nil without a before or an after window.
func LoopOf(rows []result.Row, endedMS *int64, o Sources) *result.Loop {
	end := int64(0)
	if endedMS != nil {
		end = max(*endedMS, 0)
	}
	row := result.RowWidth.Milliseconds()
	before, after := sumRows(rows, func(t int64) bool { return t < 0 }), sumRows(rows, func(t int64) bool { return t >= 0 && t+row > end })
	if before.rows == 0 || after.rows == 0 {
		return nil
	}
	floor := 1 / before.secs() // one event over the before window, a second
	rate := func(f func(rowSums) int64) *result.LoopFigure {
		return loopFigure(float64(f(before))/before.secs(), float64(f(after))/after.secs(), floor)
	}
	l := &result.Loop{AttemptsPerRequest: loopFigure(perRequest(before), perRequest(after), 1/float64(max(before.requests, 1)))}
	if o.DB {
		l.DBQPS = loopFigure(before.dbQPS/float64(before.rows), after.dbQPS/float64(after.rows), floor)
	}
	if o.Cache {
		l.MissesRPS = rate(func(s rowSums) int64 { return s.misses })
	}
	if o.Replicas {
		l.Counts = map[string]*result.LoopFigure{}
		for _, c := range result.DeclaredRowCounters() {
			l.Counts[c.Name] = rate(func(s rowSums) int64 { return s.counts[c.Name] })
		}
	}
	return l
}

// rowSums are a window's rows added up.
type rowSums struct {
	rows, requests, attempts, misses int64
	counts                           map[string]int64 // the subject's row counters
	dbQPS                            float64
}

func (s rowSums) secs() float64 { return (time.Duration(s.rows) * result.RowWidth).Seconds() }

func sumRows(rows []result.Row, in func(tms int64) bool) rowSums {
	s := rowSums{counts: map[string]int64{}}
	for _, r := range rows {
		if !in(r.TMS) {
			continue
		}
		s.rows++
		s.requests, s.attempts, s.misses = s.requests+r.Requests, s.attempts+r.Attempts, s.misses+r.Misses
		for k, v := range r.Counts {
			s.counts[k] += v
		}
		s.dbQPS += r.DBQPS
	}
	return s
}

func perRequest(s rowSums) float64 {
	if s.requests == 0 {
		return 0
	}
	return float64(s.attempts) / float64(s.requests)
}

func loopFigure(before, after, floor float64) *result.LoopFigure {
	return &result.LoopFigure{Before: result.Round2(before), After: result.Round2(after), Ratio: result.Round2(max(after, floor) / max(before, floor))}
}
