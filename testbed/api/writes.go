package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// The writes' statements, by their text in pg_stat_statements, which
// replaces a literal constant with a parameter: they have none, and pass
// 1 as a parameter instead. Each adds to the items' counters and, in the
// same statement, fans the likes out: one feed row per follower of the
// item per like (likes.followers, none unless a write herd sets some), so
// a counter and its feed rows commit together or not at all. Each returns
// a row per counter it updated.
const (
	// WriteDirectQuery is direct's one statement per request: $2 (1) like
	// on item $1, and a feed row for each of its followers numbered from 1.
	WriteDirectQuery = `WITH u AS (UPDATE likes SET n = n + $2 WHERE item_id = $1 RETURNING item_id, followers), ` +
		`f AS (INSERT INTO feed (item_id, follower) SELECT u.item_id, g FROM u, generate_series($2, u.followers) AS g) SELECT item_id FROM u`
	// WriteApplyQuery applies a batch of queued writes at once, each write
	// id once: one redelivered after its consumer died adds nothing. $3 is 1.
	WriteApplyQuery = `WITH fresh AS (INSERT INTO applied_writes (write_id, item_id) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING RETURNING item_id), ` +
		`u AS (UPDATE likes SET n = likes.n + d.c FROM (SELECT item_id, count(*) AS c FROM fresh GROUP BY item_id) d WHERE likes.item_id = d.item_id RETURNING likes.item_id, likes.followers, d.c), ` +
		writeFanout + ` SELECT c FROM u`
	// WriteFlushQuery adds a replica's coalesced increments. $3 is 1.
	WriteFlushQuery = `WITH u AS (UPDATE likes SET n = likes.n + d.c FROM unnest($1::bigint[], $2::bigint[]) AS d(item_id, c) WHERE likes.item_id = d.item_id RETURNING likes.item_id, likes.followers, d.c), ` +
		writeFanout + ` SELECT item_id FROM u`
	// writeFanout is the fan-out of c likes per updated counter u: for
	// each like, a feed row per follower.
	writeFanout = `f AS (INSERT INTO feed (item_id, follower) SELECT u.item_id, g FROM u, generate_series($3::bigint, u.c) AS k, generate_series($3::int, u.followers) AS g)`
)

// claimIdle is how long a queued write stays with a consumer that read it
// and did not acknowledge it before another consumer claims it: the
// consumer or its replica died between reading and applying.
const claimIdle = 2 * time.Second

// writer applies the replica's writes per its write strategy. The queue's
// consumer and the coalescer's flusher run only under their strategy: a
// change of config stops the one and starts the other.
type writer struct {
	s *Server

	mu      sync.Mutex // guards cfg, pending, stop and done
	cfg     replica.Config
	pending map[int64]int64 // coalesce: increments not flushed yet
	stop    context.CancelFunc
	done    chan struct{}
}

// configure stops what the old config ran (flushing what coalesce holds)
// and starts what c runs.
func (w *writer) configure(c replica.Config) {
	w.halt()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cfg = c
	if c.WriteStrategy != replica.WriteQueue && c.WriteStrategy != replica.WriteCoalesce {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.stop, w.done = cancel, make(chan struct{})
	if c.WriteStrategy == replica.WriteQueue {
		go w.consume(ctx, c, w.done)
	} else {
		go w.flushEvery(ctx, time.Duration(c.CoalesceInterval), w.done)
	}
}

// halt stops the running consumer or flusher and waits for it.
func (w *writer) halt() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop, w.done = nil, nil
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// postLike serves POST /items/{id}/likes: one like, acknowledged per the
// write strategy. 204 once committed (direct), 202 once queued or held
// (queue, coalesce).
func (s *Server) postLike(w http.ResponseWriter, r *http.Request) {
	v := s.view()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		v.m.writes.WithLabelValues(admin.WriteInvalid).Inc()
		RespondError(w, http.StatusBadRequest, fmt.Sprintf("item id %q: want a positive integer", r.PathValue("id")))
		return
	}
	wid := r.Header.Get(admin.WriteIDHeader)
	if wid == "" {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		wid = hex.EncodeToString(b)
	}
	if s.opts.DB == replica.DBMariaDB && len(wid) > MaxWriteIDMariaDB {
		v.m.writes.WithLabelValues(admin.WriteInvalid).Inc()
		RespondError(w, http.StatusBadRequest, fmt.Sprintf("%s: %d bytes (accepted on MariaDB: up to %d, the length of applied_writes.write_id)", admin.WriteIDHeader, len(wid), MaxWriteIDMariaDB))
		return
	}
	s.busy.Add(1)
	defer s.busy.Add(-1)
	code, err := s.writer.write(r.Context(), v, id, wid)
	if err != nil {
		v.m.writes.WithLabelValues(admin.WriteError).Inc()
		RespondError(w, http.StatusInternalServerError, err.Error())
		return
	}
	v.m.writes.WithLabelValues(admin.WriteAcked).Inc()
	w.Header().Set(admin.WriteIDHeader, wid)
	w.WriteHeader(code)
}

// write does one write per the strategy and says the status that
// acknowledges it.
func (w *writer) write(ctx context.Context, v view, id int64, wid string) (int, error) {
	switch v.cfg.WriteStrategy {
	case replica.WriteQueue:
		err := w.s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: replica.WriteStream, Values: map[string]any{
			"item": id, "id": wid, "at": time.Now().UnixNano()}}).Err()
		return http.StatusAccepted, err
	case replica.WriteCoalesce:
		w.mu.Lock()
		if w.pending == nil {
			w.pending = map[int64]int64{}
		}
		w.pending[id]++
		w.mu.Unlock()
		return http.StatusAccepted, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.s.opts.DBTimeout)
	defer cancel()
	err := w.s.db.Like(ctx, id)
	if err == nil {
		v.m.writesApplied.Add(1)
		w.s.invalidateWritten(ctx, v, []int64{id})
	}
	return http.StatusNoContent, err
}

// consume is the queue's consumer: it applies queued writes in batches at
// up to apply_rate, claiming first what a dead consumer left unacknowledged.
func (w *writer) consume(ctx context.Context, c replica.Config, done chan struct{}) {
	defer close(done)
	rdb, name := w.s.rdb, w.s.opts.Name
	if err := rdb.XGroupCreateMkStream(ctx, replica.WriteStream, replica.WriteGroup, "0").Err(); err != nil && !isBusyGroup(err) && ctx.Err() == nil {
		w.s.writeErr(err)
	}
	var lim *rate.Limiter
	if c.ApplyRate > 0 {
		lim = rate.NewLimiter(rate.Limit(c.ApplyRate), c.WriteBatch)
	}
	for ctx.Err() == nil {
		msgs, _, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: replica.WriteStream, Group: replica.WriteGroup, Consumer: name,
			MinIdle: claimIdle, Start: "0-0", Count: int64(c.WriteBatch)}).Result()
		if err == nil && len(msgs) == 0 {
			var streams []redis.XStream
			streams, err = rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: replica.WriteGroup, Consumer: name,
				Streams: []string{replica.WriteStream, ">"}, Count: int64(c.WriteBatch), Block: 100 * time.Millisecond}).Result()
			for _, st := range streams {
				msgs = append(msgs, st.Messages...)
			}
		}
		if err != nil && strings.HasPrefix(err.Error(), "NOGROUP") {
			// the stream went with a flush of Redis: make it and the group again
			err = rdb.XGroupCreateMkStream(ctx, replica.WriteStream, replica.WriteGroup, "0").Err()
			if isBusyGroup(err) {
				err = nil
			}
		}
		if errors.Is(err, redis.Nil) || len(msgs) == 0 {
			if err != nil && !errors.Is(err, redis.Nil) && ctx.Err() == nil {
				w.s.writeErr(err)
				sleepCtx(ctx, 100*time.Millisecond) // Redis is away: retry, bounded by ctx
			}
			continue
		}
		if lim != nil && lim.WaitN(ctx, len(msgs)) != nil {
			return // stopping: the writes stay pending, another consumer claims them
		}
		w.apply(ctx, msgs)
	}
}

// apply writes a batch of queued writes in one statement and acknowledges
// them; a batch that fails stays pending and is claimed again.
func (w *writer) apply(ctx context.Context, msgs []redis.XMessage) {
	v := w.s.view()
	ids := make([]string, 0, len(msgs))
	items := make([]int64, 0, len(msgs))
	acks := make([]string, 0, len(msgs))
	var ats []int64
	for _, m := range msgs {
		item, err1 := strconv.ParseInt(fmt.Sprint(m.Values["item"]), 10, 64)
		at, err2 := strconv.ParseInt(fmt.Sprint(m.Values["at"]), 10, 64)
		id, _ := m.Values["id"].(string)
		acks = append(acks, m.ID)
		if err1 != nil || err2 != nil || id == "" {
			continue // not a write of ours: acknowledged, never applied
		}
		ids, items, ats = append(ids, id), append(items, item), append(ats, at)
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.s.opts.DBTimeout)
	defer cancel()
	applied, err := w.s.db.Apply(dctx, ids, items)
	if err != nil {
		w.s.writeErr(err)
		return
	}
	v.m.writesApplied.Add(float64(applied))
	w.s.invalidateWritten(dctx, v, slices.Compact(slices.Sorted(slices.Values(items))))
	// the lag of each write this batch applied: a batch claimed again from
	// a consumer too slow to acknowledge it (claimIdle) applies nothing
	// the first did not, and adds no lag; of a batch that overlaps one
	// applied before, the first writes' lags stand for the fresh ones'
	now := time.Now().UnixNano()
	for _, at := range ats[:min(int(applied), len(ats))] {
		v.m.writeLag.Observe(time.Duration(now - at).Seconds())
	}
	if err := w.s.rdb.XAck(dctx, replica.WriteStream, replica.WriteGroup, acks...).Err(); err != nil {
		w.s.writeErr(err) // applied: a redelivery adds nothing (applied_writes)
	}
}

// flushEvery is coalesce's flusher: every interval it adds what the
// replica holds in one statement; what a crash loses is what it held.
func (w *writer) flushEvery(ctx context.Context, every time.Duration, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			w.flush() // a graceful stop keeps what it held
			return
		case <-tick.C:
			w.flush()
		}
	}
}

// flush adds the held increments; on failure they are held again.
func (w *writer) flush() {
	w.mu.Lock()
	held := w.pending
	w.pending = nil
	w.mu.Unlock()
	if len(held) == 0 {
		return
	}
	items := make([]int64, 0, len(held))
	counts := make([]int64, 0, len(held))
	var total int64
	for id, c := range held {
		items, counts, total = append(items, id), append(counts, c), total+c
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.s.opts.DBTimeout)
	defer cancel()
	if err := w.s.db.Add(ctx, items, counts); err != nil {
		w.s.writeErr(err)
		w.mu.Lock()
		if w.pending == nil {
			w.pending = map[int64]int64{}
		}
		for id, c := range held {
			w.pending[id] += c
		}
		w.mu.Unlock()
		return
	}
	v := w.s.view()
	v.m.writesApplied.Add(float64(total))
	w.s.invalidateWritten(ctx, v, items)
}

// invalidateWritten does to the written items' cache entries what
// write_invalidate says, once their writes are in Postgres: delete them
// (and this replica's in-process copies), so the next reads miss and load
// under the read strategy, as cache-aside services do; or broadcast them,
// so every replica reloads them at once. A failure leaves the entries
// until they expire; it is counted and logged.
func (s *Server) invalidateWritten(ctx context.Context, v view, ids []int64) {
	if len(ids) == 0 || v.cfg.WriteInvalidate == replica.InvalidateNone {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RedisTimeout)
	defer cancel()
	var err error
	switch v.cfg.WriteInvalidate {
	case replica.InvalidateDelete:
		keys := make([]string, len(ids))
		for i, id := range ids {
			keys[i] = ItemKey(id)
		}
		for _, st := range v.state {
			if f, ok := st.(Forgetter); ok {
				f.Forget(ids)
			}
		}
		err = s.cache.Delete(ctx, keys...)
	case replica.InvalidateRefresh: // Redis only (replica.Options.CacheProblems)
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.FormatInt(id, 10)
		}
		err = s.rdb.Publish(ctx, InvalidateChannel, strings.Join(parts, ",")).Err()
	}
	if err != nil {
		v.m.writeErrors.Inc()
		slog.Warn("writes: cache entries left until they expire", "replica", s.opts.Name, "items", ids, "err", err)
	}
}

// writeErr counts a failure of the writes' background work and logs it:
// the writes stay queued or held and are tried again, and the log says why.
func (s *Server) writeErr(err error) {
	s.view().m.writeErrors.Inc()
	slog.Warn("writes: will retry", "replica", s.opts.Name, "err", err)
}

// isBusyGroup is XGROUP CREATE's answer when the group exists already.
func isBusyGroup(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "BUSYGROUP") }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d): // unstopped, it is collected all the same (Go 1.23)
	}
}
