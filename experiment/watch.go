package experiment

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/observe"
)

// aborted is the cause an arm's context ends with when a stop condition
// held.
type aborted struct{ result.Abort }

func (a *aborted) Error() string { return "aborted: " + a.Reason }

// watcher is what watch reads and calls while an arm's load runs.
type watcher struct {
	sampler    *observe.Sampler
	rec        *Recorder
	t          time.Time     // T
	loadStart  time.Time     // when the load's schedule began
	warmup     time.Duration // the warmup's length, from loadStart
	progress   func(phase string, dbqps float64, requests int64)
	conds      []gates.Gate             // the stop conditions on live figures
	abort      context.CancelCauseFunc  // ends the arm when one holds
	observesDB bool                     // db.qps is a live figure
	judge      func(now time.Time) bool // checked every judgeEvery after T; true: the arm is over (nil: never)
	judgeEvery time.Duration            // how often judge is asked

	heard func(now time.Time) time.Time // the requests are filed up to it (Hearer); nil: now
}

// judgeEvery is how often an arm that may end on its verdict (--after
// auto, a stop condition on the verdict) is judged on its rows so far.
const judgeEvery = 500 * time.Millisecond

// watch reports progress and checks the stop conditions every RowWidth
// until the returned stop is called. When a condition holds on the live
// figures it ends the arm through abort, once; when judge says the arm is
// over, it stops checking.
func watch(ctx context.Context, w watcher) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(result.RowWidth)
		defer tick.Stop()
		var recent []observe.Sample // the last LiveWindow of samples, and one before
		var judged time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := time.Now()
			phase := PhaseAfter
			switch {
			case now.Before(w.loadStart.Add(w.warmup)):
				phase = PhaseWarmup
			case now.Before(w.t):
				phase = PhaseBefore
			}
			if cur, ok := w.sampler.Latest(); ok && (len(recent) == 0 || cur.At.After(recent[len(recent)-1].At)) {
				recent = append(recent, cur)
				for len(recent) > 2 && cur.At.Sub(recent[1].At) > LiveWindow {
					recent = recent[1:]
				}
			}
			qps, haveQPS := dbRate(recent)
			w.progress(phase, qps, w.rec.requests())
			if w.judge != nil && phase == PhaseAfter && now.Sub(judged) >= w.judgeEvery {
				judged = now
				if w.judge(now) {
					w.judge = nil
				}
			}
			if len(w.conds) == 0 {
				continue
			}
			figures := w.rec.liveFigures(heardAt(w.heard, now))
			if haveQPS && w.observesDB {
				figures["db.qps"] = &qps
			}
			if c, v, ok := checkAbort(w.conds, figures); ok {
				w.abort(&aborted{result.Abort{AtMS: now.Sub(w.t).Milliseconds(), Gate: c.Expr,
					Reason: fmt.Sprintf("%s held: %s was %s over the last %s", c.Expr, c.Path, strconv.FormatFloat(v, 'g', 4, 64), LiveWindow)}})
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}
