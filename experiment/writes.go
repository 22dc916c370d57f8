package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/triggers"
)

// WriteObserver is a subject whose write path herdbench reads in a write
// herd (the writes trigger): the queue the writes wait in, the statements
// that apply them, and their lag. A subject without one has no write
// figures; the testbed has one.
type WriteObserver interface {
	// WriteQueue is the stream and group whose depth every sample reads
	WriteQueue() observe.Queue
	// WriteStatements are the write statements' calls and rows so far
	WriteStatements(ctx context.Context) (calls, rows int64, err error)
	// WriteLag is the lag of the writes applied so far
	WriteLag(ctx context.Context) (result.WriteLag, error)
}

// writeHerd says whether the arm's trigger is the write herd, whose
// figures are read.
func (a *armRun) writeHerd() bool {
	_, ok := a.trig.(triggers.Writer)
	_, observed := a.sub.(WriteObserver)
	return ok && observed && a.tg.Grants.Likes != nil
}

// writeStatements reads the write statements' calls and rows so far.
func (a *armRun) writeStatements(ctx context.Context) (calls, rows int64, err error) {
	calls, rows, err = a.sub.(WriteObserver).WriteStatements(ctx)
	if err != nil {
		err = fmt.Errorf("the write statements: %w", err)
	}
	return calls, rows, err
}

// steady is a trigger's steady load under way: its own recorder, and what
// the service acknowledged.
type steady struct {
	rate  int
	rec   *Recorder
	acked int64
	done  chan error
}

// startSteady sends the trigger's steady load (triggers.Workload) from this
// process, on its own schedule from start, until the load's end or ctx;
// nil when the trigger sends none.
func (a *armRun) startSteady(ctx context.Context, tenv triggers.Env, start, t time.Time) *steady {
	l, ok := a.trig.(triggers.Workload)
	if !ok {
		return nil
	}
	st := l.Steady(tenv)
	if st.Rate < 1 || len(st.Keys) == 0 {
		return nil
	}
	p := a.p
	s := &steady{rate: st.Rate, rec: NewRecorder(t, time.Duration(p.Before), time.Duration(p.After), false), done: make(chan error, 1)}
	c := load.Config{Targets: a.tg.Endpoints, Rate: st.Rate, Duration: p.Duration(), Start: start,
		Request: load.Request{Method: st.Method, Path: st.Path}, Header: a.tg.Header,
		Source: load.NewListKeys(st.Keys, p.Seed), Seed: p.Seed, Timeout: time.Duration(p.Timeout),
		Cut: a.ending.cutter()}
	go func() {
		_, err := load.Attack(ctx, c, func(r load.Record) {
			s.rec.Add(r)
			if r.Outcome == load.OK {
				s.acked++
			}
		})
		s.done <- err
	}()
	return s
}

// wait waits for the steady load's end.
func (s *steady) wait() error {
	if s == nil {
		return nil
	}
	return <-s.done
}

// acknowledged is what the steady load had acknowledged; 0 without one.
func (s *steady) acknowledged() int64 {
	if s == nil {
		return 0
	}
	return s.acked
}

// writeFigures sums up what the write herd cost, once it settled: the
// write statements since the fill (w0), the samples' peaks, the queue's
// lag and the steady writes.
func (a *armRun) writeFigures(ctx context.Context, res *result.ArmResult, w0 [2]int64, samples []observe.Sample, s *steady) {
	w := &result.WriteFigures{}
	calls, rows, err := a.writeStatements(ctx)
	// as the item query's (settled): until the database's count of the
	// write statements and their rows holds still, 1 s at most
	for deadline := time.Now().Add(time.Second); err == nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // polling, with the deadline above
		c, r, nerr := a.writeStatements(ctx)
		if nerr != nil || (c == calls && r == rows) {
			break
		}
		calls, rows = c, r
	}
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	w.Statements, w.Rows = calls-w0[0], rows-w0[1]
	for _, smp := range samples {
		w.LockWaitsPeak = max(w.LockWaitsPeak, smp.LockWaits)
		w.LocksWaitingPeak = max(w.LocksWaitingPeak, smp.LocksWaiting)
		w.QueueDepthPeak = max(w.QueueDepthPeak, smp.QueueDepth)
	}
	if lag, err := a.sub.(WriteObserver).WriteLag(ctx); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("write lag: %v", err))
	} else {
		w.Lag = &lag
	}
	if s != nil {
		w.Steady = &result.SteadyWrites{Rate: s.rate, Acked: s.acked, HTTP: s.rec.http(),
			Load: s.rec.generator(time.Duration(a.p.Before + a.p.After))}
	}
	res.Writes = w
}
