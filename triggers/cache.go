package triggers

import (
	"context"
	"strings"
	"time"

	"github.com/herdbench/herdbench/figure"
)

// Cache is one of the service's caches as triggers act on it: a Redis
// (stores/redis), a Memcached (stores/memcached), an HTTP cache in front
// of the service (httpcache.go). Env.Caches holds those the target declares, in
// the order the triggers act on them, so a trigger is one loop over them:
// expire deletes the hot keys from every cache that is Keyed, flush
// empties every cache that Flushes, ttl aligns every Keyed Expirer. What
// only some stores do is an optional interface (Expirer, Selective,
// Broadcaster, Pauser).
//
// Each Describe method says exactly what its action would touch, for a
// dry run, and contacts nothing: before the target connects, a cache's
// client is nil.
type Cache interface {
	// Keyed says whether it knows the entry of a request's key: what
	// Delete, and an Expirer's ExpireAt, act on
	Keyed() bool
	// DescribeDelete and Delete remove the hot keys' entries (expire)
	DescribeDelete(hot []string) string
	Delete(ctx context.Context, hot []string) (Touched, error)
	// Flushes says whether Flush empties it, whole or the part the
	// target lets triggers touch
	Flushes() bool
	// DescribeFlush and Flush empty it (flush); env is the arm's, for a
	// flush that runs a command
	DescribeFlush() string
	Flush(ctx context.Context, env Env) (Touched, error)
}

// Expirer is a Keyed cache whose entries can be made to expire at an
// instant (ttl): Redis and Memcached, not an HTTP cache.
type Expirer interface {
	DescribeExpireAt(hot []string) string
	ExpireAt(ctx context.Context, hot []string, at time.Time) (Touched, error)
}

// Selective is a cache whose invalidations carry the arm's selection,
// its headers over the target's and its query values: an HTTP cache that
// keys its entries by the arm's header purges the arm's own.
type Selective interface {
	Select(headers, query map[string]string)
}

// Broadcaster is a cache that carries a broadcast invalidation of keys
// to every replica of the service (notify): Redis' pub/sub, when the
// target names the channel (Broadcasts).
type Broadcaster interface {
	Broadcasts() bool
	DescribeBroadcast(hot []string) string
	Broadcast(ctx context.Context, hot []string) (receivers int64, err error)
}

// Pauser is a cache that can stop answering every client for a while, by
// itself (outage without toxiproxy): Redis' CLIENT PAUSE. Unpause ends
// the pause early.
type Pauser interface {
	DescribePause(d time.Duration) string
	Pause(ctx context.Context, d time.Duration) error
	Unpause(ctx context.Context) error
}

// Touched is what a cache did for a trigger, which the trigger adds to its
// detail: the keys it acted on, the entries it removed, and the record of
// its own that the results contract gives it (trigger.detail.memcached,
// trigger.detail.http_cache).
type Touched struct {
	Keys      int              // hot keys it acted on
	Found     *int             // of them, those the cache held (Redis' PEXPIREAT answered 1); nil: not counted
	Removed   int64            // entries it removed: keys unlinked, items it held; after a flush_all, how far Memcached's count of items fell
	Emptied   time.Time        // when a flush's last command was answered, if the cache read on after it; zero: when Flush returned
	Pattern   string           // a flush limited to the keys of this pattern (a Redis herdbench did not start)
	Memcached *MemcachedDetail // a Memcached's commands
	HTTPCache *CacheAnswers    // an HTTP cache's requests and answers, or its command
}

// MemcachedDetail is what a trigger did to a Memcached: the results'
// trigger.detail.memcached.
type MemcachedDetail struct {
	Command   string `json:"command"`              // delete, touch or flush_all
	Sent      int    `json:"sent"`                 // commands sent: one per hot key, or one flush_all
	Found     *int   `json:"found,omitempty"`      // delete, touch: items it held (the rest answered NOT_FOUND); absent for flush_all
	ExpiresAt int64  `json:"expires_at,omitempty"` // touch: the Unix second the items expire at
	TookMS    int64  `json:"took_ms"`              // from the first command to the last answer
	// ItemsBefore and ItemsAfter are, for flush_all, the server's own
	// count of its items (stats curr_items) just before it, and the
	// lowest read after it once the server reclaimed what it flushed
	ItemsBefore *int64 `json:"items_before,omitempty"`
	ItemsAfter  *int64 `json:"items_after,omitempty"`
}

// memcachedDetail are the figures of Memcached's.
var memcachedDetail = figure.Decl[MemcachedDetail]{
	figure.CountOf("sent", func(d *MemcachedDetail) *int { return &d.Sent }),
	figure.Opt("found", figure.Count, "", func(d *MemcachedDetail) **int { return &d.Found }).OmitEmpty(),
	figure.LevelOf("expires_at", func(d *MemcachedDetail) *int64 { return &d.ExpiresAt }).OmitEmpty(),
	figure.MillisOf("took_ms", func(d *MemcachedDetail) *int64 { return &d.TookMS }),
	figure.Opt("items_before", figure.Count, "", func(d *MemcachedDetail) **int64 { return &d.ItemsBefore }).OmitEmpty(),
	figure.Opt("items_after", figure.Count, "", func(d *MemcachedDetail) **int64 { return &d.ItemsAfter }).OmitEmpty(),
}

// List is how a Describe names the keys it would touch: up to ten, then
// how many more.
func List(keys []string) string { return list(keys) }

// ConnKiller is the service's database as conndrop resets it without
// toxiproxy: the connections of the service's role or user, never
// herdbench's own; Postgres' pg_terminate_backend (stores/postgres),
// MySQL's and MariaDB's KILL CONNECTION (stores/mysql).
type ConnKiller interface {
	DescribeKill() string // for a dry run; contacts nothing
	Kill(ctx context.Context) (ConndropDetail, error)
}

// joinPlans joins what a trigger does to each part of a target, as
// describe says it of each of cs.
func joinPlans[C any](cs []C, describe func(C) string) string {
	if len(cs) == 0 {
		return "nothing: the target declares no cache it may touch"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = describe(c)
	}
	return strings.Join(parts, "; and ")
}

// cachesThat are the caches of env that are a C and that keep says
// yes of, in order: those a trigger acts on.
func cachesThat[C any](env Env, keep func(C) bool) []C {
	var out []C
	for _, c := range env.Caches {
		if x, ok := c.(C); ok && keep(x) {
			out = append(out, x)
		}
	}
	return out
}
