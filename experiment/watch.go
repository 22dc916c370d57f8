package experiment

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/observe"
)

// aborted is the cause an arm's context ends with when a stop condition
// held.
type aborted struct{ Abort }

func (a *aborted) Error() string { return "aborted: " + a.Reason }

// watch reports progress and checks the stop conditions every RowWidth
// until the returned stop is called. When a condition holds on the live
// figures it ends the arm through abort, once.
func watch(ctx context.Context, s *observe.Sampler, rec *Recorder, t time.Time, warmup time.Duration,
	loadStart time.Time, progress func(string, float64, int64), conds []gates.Gate, abort context.CancelCauseFunc, observesDB bool) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(RowWidth)
		defer tick.Stop()
		var recent []observe.Sample // the last LiveWindow of samples, and one before
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := time.Now()
			phase := PhaseAfter
			switch {
			case now.Before(loadStart.Add(warmup)):
				phase = PhaseWarmup
			case now.Before(t):
				phase = PhaseBefore
			}
			if cur, ok := s.Latest(); ok && (len(recent) == 0 || cur.At.After(recent[len(recent)-1].At)) {
				recent = append(recent, cur)
				for len(recent) > 2 && cur.At.Sub(recent[1].At) > LiveWindow {
					recent = recent[1:]
				}
			}
			qps, haveQPS := dbRate(recent)
			progress(phase, qps, rec.requests())
			if len(conds) == 0 {
				continue
			}
			figures := rec.liveFigures(now)
			if haveQPS && observesDB {
				figures["db.qps"] = &qps
			}
			if c, v, ok := checkAbort(conds, figures); ok {
				abort(&aborted{Abort{AtMS: now.Sub(t).Milliseconds(), Gate: c.Expr,
					Reason: fmt.Sprintf("%s held: %s was %s over the last %s", c.Expr, c.Path, strconv.FormatFloat(v, 'g', 4, 64), LiveWindow)}})
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}
