package service

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/targets"
)

// DrainLimit bounds a service's drain when its target file sets no
// limits.max_drain and its clients' whole deadline is shorter (LimitFor):
// past it, the arm is measured with the work still running, and says so.
const DrainLimit = 15 * time.Second

// drainTick is how often a service's drain reads its sources.
const drainTick = 100 * time.Millisecond

// LimitFor is the drain's limit for p on tg: its file's
// limits.max_drain, or else the longer of DrainLimit and the clients'
// whole deadline (p.Load().Deadline), so that a drain never gives up on
// work a client could still be waiting for.
func LimitFor(tg *targets.Target, p plan.Plan) time.Duration {
	if d := tg.Limits.Drain(); d > 0 {
		return d
	}
	return max(DrainLimit, p.Load().Deadline)
}

// source is one thing a drain waits on: busy says what of the arm's work
// it still holds, from the previous reading and this one; "" when idle.
type source struct {
	name string
	wait func(w *result.DrainWaits) **int64
	busy func(prev, cur reading) string
}

// reading is one reading of a drain's sources: the stores and HAProxy,
// and the series it waits on, by name.
type reading struct {
	observe.Sample
	series map[string]float64
}

// sources are what the target declares that a drain can see: its
// database, its cache, its load balancer and the Prometheus series it
// names to wait on, in that order.
func (s *Subject) sources() []source {
	tg := s.Target
	var out []source
	if tg.DB != nil || tg.MySQL != nil {
		out = append(out, source{"db", func(w *result.DrainWaits) **int64 { return &w.DBMS }, func(prev, cur reading) string {
			if cur.Active == 0 && cur.Calls == prev.Calls {
				return ""
			}
			return fmt.Sprintf("%d statements of its role running, %d DB queries completing in the last %s", cur.Active, cur.Calls-prev.Calls, drainTick)
		}})
	}
	if tg.Redis != nil || tg.Memcached != nil {
		out = append(out, source{"cache", func(w *result.DrainWaits) **int64 { return &w.CacheMS }, func(prev, cur reading) string {
			if cur.CacheOps == prev.CacheOps {
				return ""
			}
			return fmt.Sprintf("%d cache commands served in the last %s", cur.CacheOps-prev.CacheOps, drainTick)
		}})
	}
	if tg.HAProxy != nil {
		out = append(out, source{"lb", func(w *result.DrainWaits) **int64 { return &w.LBMS }, s.lbBusy})
	}
	if p := tg.Prometheus; p != nil && len(p.Drain) > 0 {
		out = append(out, source{"prometheus", func(w *result.DrainWaits) **int64 { return &w.PrometheusMS }, s.seriesBusy})
	}
	return out
}

// seriesBusy says which of the series the drain waits on are still above
// their value before the arm's fill.
func (s *Subject) seriesBusy(_, cur reading) string {
	var above []string
	for _, name := range s.Target.Prometheus.Drain {
		if v, idle := cur.series[name], s.idleSeries[name]; v > idle {
			above = append(above, fmt.Sprintf("%s %g (%g before the arm)", name, v, idle))
		}
	}
	return strings.Join(above, ", ")
}

// lbBusy says what HAProxy still holds: requests in its queues, or its
// backend's sessions above their level before the arm's fill.
func (s *Subject) lbBusy(_, cur reading) string {
	switch lb := cur.LB; {
	case lb == nil:
		return "its stats page did not answer"
	case lb.Queued() > 0 || lb.Backend.Current > max(s.idleLB, 0):
		return fmt.Sprintf("HAProxy queued %d requests and its backend %s held %d sessions (%d before the arm)",
			lb.Queued(), cmp.Or(s.backend, s.Target.HAProxy.Backend), lb.Backend.Current, max(s.idleLB, 0))
	}
	return ""
}

// lbLevel is HAProxy's backend's sessions now, before an arm's fill: the
// level its drain waits for; -1 without HAProxy, or when its stats page
// does not answer (the drain then waits for its sessions to reach 0).
func (s *Subject) lbLevel(ctx context.Context) int64 {
	lb := s.Target.LB(s.backend)
	if lb == nil {
		return -1
	}
	st, err := lb.Read(ctx)
	if err != nil {
		return -1
	}
	return st.Backend.Current
}

// Drain waits, up to its limit, until every source the target declares
// is idle in one reading, read every drainTick: the database's statements
// of its role stopped running (Sample.Active) and completing (their count
// unchanged over a tick); the cache's commands stopped (Sample.CacheOps
// unchanged over a tick); HAProxy's queues empty and its backend's
// sessions back at their level before the arm's fill; each series of
// prometheus.drain at or below its value then. It says how long
// each source held it. Without a source herdbench cannot see what the
// service still runs, and Drain returns at once. Past the limit it returns
// an error wrapping ErrStillRunning, naming what each busy source held.
func (s *Subject) Drain(ctx context.Context) (*result.DrainWaits, error) {
	srcs := s.sources()
	if len(srcs) == 0 {
		return nil, nil
	}
	start := time.Now()
	limit := cmp.Or(s.Limit, DrainLimit)
	// a reading that fails (a source slow or down for a moment) holds the
	// drain as a busy source does, up to the limit: the arm is measured
	// all the same, with a warning, never thrown away
	first, err := s.read(ctx)
	for err != nil {
		if time.Since(start) > limit {
			return nil, fmt.Errorf("drain: after %s its sources could not be read: %v: %w", limit, err, plan.ErrStillRunning)
		}
		if err := sleepCtx(ctx, drainTick); err != nil {
			return nil, err
		}
		first, err = s.read(ctx)
	}
	prev := first
	idleSince := make([]time.Time, len(srcs)) // zero: busy at the last reading
	for {
		if err := sleepCtx(ctx, drainTick); err != nil {
			return nil, err
		}
		cur, err := s.read(ctx)
		if err != nil {
			if time.Since(start) > limit {
				return s.waits(srcs, idleSince, start, first, prev), fmt.Errorf("drain: after %s its sources could not be read: %v: %w", limit, err, plan.ErrStillRunning)
			}
			continue
		}
		var held []string
		for i, src := range srcs {
			why := src.busy(prev, cur)
			switch {
			case why != "":
				idleSince[i] = time.Time{}
				held = append(held, src.name+": "+why)
			case idleSince[i].IsZero():
				idleSince[i] = cur.At
			}
		}
		if len(held) == 0 {
			return s.waits(srcs, idleSince, start, first, cur), nil
		}
		if time.Since(start) > limit {
			return s.waits(srcs, idleSince, start, first, cur), fmt.Errorf("drain: after %s the service still held work: %s: %w",
				limit, strings.Join(held, "; "), plan.ErrStillRunning)
		}
		prev = cur
	}
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// read reads the drain's sources once.
func (s *Subject) read(ctx context.Context) (reading, error) {
	tg := s.Target
	src := observe.Source{DB: tg.DB, MySQL: tg.MySQL, Redis: tg.Redis, Memcached: tg.Memcached, Statements: tg.Statements, Role: tg.Role, HAProxy: tg.LB(s.backend)}
	smp, err := src.Read(ctx)
	if err != nil {
		return reading{}, err
	}
	series, err := tg.Instant(ctx)
	return reading{smp, series}, err
}

// waits is how long each source held the drain, from start to the reading
// from which it stayed idle (to the last reading, when still busy), which
// held it longest, and what the load balancer and the cache held from the
// first reading on.
func (s *Subject) waits(srcs []source, idleSince []time.Time, start time.Time, first, last reading) *result.DrainWaits {
	w := &result.DrainWaits{}
	if s.Target.HAProxy != nil && first.LB != nil {
		n := first.LB.Queued() + max(first.LB.Backend.Current-max(s.idleLB, 0), 0)
		w.LBSessions = &n
	}
	if s.Target.Redis != nil || s.Target.Memcached != nil {
		n := last.CacheOps - first.CacheOps
		w.CacheCommands = &n
	}
	longest := int64(-1)
	for i, src := range srcs {
		at := idleSince[i]
		if at.IsZero() {
			at = last.At
		}
		ms := at.Sub(start).Milliseconds()
		*src.wait(w) = &ms
		if ms > longest {
			longest, w.HeldBy = ms, src.name
		}
	}
	return w
}
