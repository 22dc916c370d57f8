package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// FillQuery is the bulk fill's statement: the rows of a range of items, a
// batch at a time. pg_stat_statements counts it apart from ItemQuery, so a
// fill never counts as the herd's queries, and is still seen.
const FillQuery = "SELECT i.id, i.name, i.payload, l.n FROM items i JOIN likes l ON l.item_id = i.id WHERE i.id BETWEEN $1 AND $2 ORDER BY i.id"

// FillBatch is how many rows one fill query reads.
const FillBatch = 1000

// MaxFill bounds the items one POST /admin/fill may fill.
const MaxFill = 1_000_000

// postFill caches the items of a range as misses would, with the replica's
// run-time config: their entries, TTLs (jitter included) and stale copies
// are what loadAndSet stores, so an experiment's cache starts full in a
// moment rather than after one query per key. It runs no item query and
// counts no load.
func (s *Server) postFill(w http.ResponseWriter, r *http.Request) {
	var req admin.FillRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		RespondError(w, http.StatusBadRequest, "invalid fill: "+replica.DefaultConfig.Registry().DescribeError(err)+` (accepted: {"from": N, "to": M})`)
		return
	}
	if req.From < 1 || req.To < req.From || req.To-req.From >= MaxFill {
		RespondError(w, http.StatusBadRequest, fmt.Sprintf("invalid fill: from %d to %d (accepted: 1 <= from <= to, at most %d items)", req.From, req.To, MaxFill))
		return
	}
	res, err := s.fill(r.Context(), req.From, req.To)
	if err != nil {
		RespondError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if want := req.To - req.From + 1; res.Filled != want {
		RespondError(w, http.StatusNotFound, fmt.Sprintf("fill: %d of the %d items from %d to %d exist (the testbed seeds testbed up --items)", res.Filled, want, req.From, req.To))
		return
	}
	RespondJSON(w, http.StatusOK, res)
}

// fill caches the items from..to, FillBatch rows a query: each entry
// records the batch's query time shared among its rows as its load time.
func (s *Server) fill(ctx context.Context, from, to int64) (admin.FillResponse, error) {
	v := s.view()
	var res admin.FillResponse
	for lo := from; lo <= to; lo += FillBatch {
		hi := min(lo+FillBatch-1, to)
		start := time.Now()
		items, err := s.rows(ctx, lo, hi)
		res.Queries++
		if err != nil {
			return res, fmt.Errorf("fill items %d to %d: %w", lo, hi, err)
		}
		if len(items) == 0 {
			continue
		}
		per := time.Since(start) / time.Duration(len(items))
		batch := make([]CacheEntry, 0, 2*len(items))
		for _, it := range items {
			b, ttl := s.entry(v, it, per)
			batch = append(batch, entries(v, it.ID, b, ttl)...)
		}
		if err := s.setFill(ctx, batch); err != nil {
			return res, fmt.Errorf("fill items %d to %d: cache: %w", lo, hi, err)
		}
		res.Filled += int64(len(items))
	}
	return res, nil
}

// fillAttempts is how many times the fill sends a batch's entries: the
// sets are idempotent, and one that timed out on a busy machine (a
// Memcached set through toxiproxy once took more than --redis-timeout
// while docker's tests ran beside it) is setup failing, not the herd.
const fillAttempts = 3

// setFill caches a fill's batch, again when a set failed.
func (s *Server) setFill(ctx context.Context, batch []CacheEntry) error {
	var err error
	for range fillAttempts {
		if err = s.cache.Set(ctx, batch...); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// rows reads the items lo..hi.
func (s *Server) rows(ctx context.Context, lo, hi int64) ([]Item, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.DBTimeout)
	defer cancel()
	return s.db.Items(ctx, lo, hi)
}
