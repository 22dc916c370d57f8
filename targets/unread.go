package targets

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
)

// Nothing read is a refusal: a field of a target file that names what
// herdbench reads or touches of the service (a statement filter, a user, a
// cache key or pattern, a Prometheus series) and reads nothing during the
// warm-up stops the run before T, at its file:line. Otherwise it would
// read as a zero (db.queries 0, a trigger that found no item) and a gate
// would pass on nothing. Checked twice: Filled after the fill, which asked
// for every hot key, and Counted at T, on the snapshot the arm counts
// from. A target that is not a file's (the testbed's, a URL's) is never
// refused: herdbench wrote its names.

// seriesLookback is how far back a Prometheus series must have a point.
const seriesLookback = 5 * time.Minute

// Filled checks, after the fill asked the service for each hot key, that
// the cache holds some of their items by the key the file names, that
// its pattern matches a key, and that each Prometheus series has a point
// in the last seriesLookback. When one of them read nothing, the run
// stops here, and s, the snapshot after the fill, is checked as Counted
// checks T's, so that every field that read nothing so far is named at
// once. before is the snapshot from before the fill: keys Redis expired
// since then may have been the hot keys' (a TTL shorter than the fill).
func (t *Target) Filled(ctx context.Context, hot []string, before, s observe.Sample) error {
	if t.file == nil {
		return nil
	}
	var bad herd.FieldErrors
	if c := t.memcachedItems(); c != nil && c.Key != nil && c.Client != nil && len(hot) > 0 {
		n, err := c.Held(ctx, hot)
		if err != nil {
			return err
		}
		if n == 0 {
			bad = append(bad, t.unread("memcached.key", "%q: none of the %d hot keys' items (%s) was in Memcached after the warm-up asked the service for each (accepted: the key the service stores a request's key under, such as page:{key}; or leave key out, and herd it with flush or a command trigger: docs/targets.md)",
				t.file.Memcached.Key, len(hot), itemList(c.Items(hot))))
		}
	}
	if r := t.redisCache(); r != nil && r.Client != nil {
		n, matched, err := r.Held(ctx, hot)
		if err != nil {
			return err
		}
		// an empty database tells nothing of a name: the service's entries
		// may all have expired (a TTL shorter than the warm-up's check);
		// nor does one whose keys expired during the fill (once, on a busy
		// machine, a service's 50 ms items all went before the check)
		holds := true
		if (r.Key != nil && n == 0 && len(hot) > 0) || (r.Pattern != "" && !matched) {
			if holds, err = r.HoldsKeys(ctx); err != nil {
				return err
			}
			holds = holds && s.Expired == before.Expired
		}
		if r.Key != nil && n == 0 && len(hot) > 0 && holds {
			bad = append(bad, t.unread("redis.key", "%q: none of the %d hot keys' Redis keys was in Redis after the warm-up asked the service for each, though Redis holds other keys (accepted: the Redis key the service stores a request's key under, such as item:{key})",
				t.file.Redis.Key, len(hot)))
		}
		if r.Pattern != "" && !matched && holds {
			bad = append(bad, t.unread("redis.pattern", "%q matches none of the keys Redis holds after the warm-up (accepted: a glob matching the service's keys, such as item:*)", r.Pattern))
		}
	}
	if p := t.Prometheus; p != nil {
		for _, name := range slices.Sorted(maps.Keys(p.Series)) {
			points, err := t.seriesPoints(ctx, p.Series[name])
			if err != nil {
				return fmt.Errorf("prometheus series %s (%s): %w", name, p.Series[name], err)
			}
			if len(points) == 0 {
				bad = append(bad, t.unread("prometheus.series."+name, "%q: Prometheus has no point of it in the last %s (accepted: a series Prometheus scrapes from the service, such as sum(rate(http_requests_total[10s])))",
					p.Series[name], seriesLookback))
			}
		}
	}
	if len(bad) > 0 {
		bad = append(bad, herd.Fields(t.Counted(s))...)
	}
	return bad.Err()
}

// seriesWait is how long a series with no point yet is asked again: a
// Prometheus that started with the run has scraped it twice by then.
const seriesWait = 15 * time.Second

// seriesPoints are the points of the series query in the last
// seriesLookback, asked every half second until there are some or
// seriesWait has passed.
func (t *Target) seriesPoints(ctx context.Context, query string) ([]Point, error) {
	deadline := time.Now().Add(seriesWait)
	for {
		now := time.Now()
		points, err := t.queryRange(ctx, query, now.Add(-seriesLookback), now, now)
		if err != nil || len(points) > 0 || now.After(deadline) {
			return points, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Counted checks the snapshot taken at T, before the trigger: the
// statements the file selects were counted by the server at least once
// (its cumulative count, so a warm cache whose warm-up ran none still
// passes when the service ran them before), and a MySQL user connected
// at least once since the server started.
func (t *Target) Counted(s observe.Sample) error {
	if t.file == nil {
		return nil
	}
	var bad herd.FieldErrors
	if m := t.file.MySQL; m != nil && t.MySQL != nil {
		field, what := "mysql.statements", fmt.Sprintf("%q", m.Statements)
		if len(m.Digests) > 0 {
			field, what = "mysql.digests", fmt.Sprintf("%d digests", len(m.Digests))
		}
		if s.ConnectionsOpened == 0 {
			bad = append(bad, t.unread("mysql.user", "%q never connected to the server (performance_schema.users has no connection of it) (accepted: the user the service connects as)", m.User))
		}
		if s.Calls == 0 {
			bad = append(bad, t.unread(field, "%s matched no statement performance_schema counted by T, the warm-up's end (accepted: the digests of the service's statements: SELECT DIGEST, DIGEST_TEXT FROM performance_schema.events_statements_summary_by_digest ORDER BY COUNT_STAR DESC shows them)", what))
		}
	}
	if p := t.file.Postgres; p != nil && t.DB != nil && s.Calls+s.FillCalls == 0 {
		field, what := "postgres.statements", fmt.Sprintf("%q", p.Statements)
		if len(p.QueryIDs) > 0 {
			field, what = "postgres.queryids", fmt.Sprintf("%d queryids", len(p.QueryIDs))
		}
		bad = append(bad, t.unread(field, "%s of role %q matched no statement pg_stat_statements counted by T, the warm-up's end (accepted: the service's role and statements: SELECT rolname, queryid, query FROM pg_stat_statements JOIN pg_roles ON userid = oid ORDER BY calls DESC shows them)", what, p.Role))
	}
	return bad.Err()
}

// unread is a refusal of the file's field: it read nothing.
func (t *Target) unread(field, format string, args ...any) *herd.FieldError {
	return &herd.FieldError{File: t.file.doc.Name, Line: t.file.Line(field), Field: field,
		Msg: "read nothing: " + fmt.Sprintf(format, args...)}
}

// itemList is a few items, for a message.
func itemList(items []string) string {
	if len(items) > 3 {
		return strings.Join(items[:3], ", ") + ", ..."
	}
	return strings.Join(items, ", ")
}
