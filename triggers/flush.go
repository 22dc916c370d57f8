package triggers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/figure"
)

// Flush empties the cache at T, as a Redis restart without persistence
// does: a cold-start stampede over every key. On a Redis herdbench did not
// start, it removes only the keys the target's pattern lets it touch; a
// Memcached gets flush_all, only when the target allows it
// (allow_flush_all); an HTTP cache in front of the service
// (http_cache.flush) is emptied by its own request (BAN) or command.
type Flush struct{}

// FlushDetail is what flush did.
type FlushDetail struct {
	KeysFlushed int64            `json:"keys_flushed"`
	Pattern     string           `json:"pattern,omitempty"`    // the keys it was limited to, on a Redis herdbench did not start
	HTTPCache   *CacheAnswers    `json:"http_cache,omitempty"` // what the HTTP cache's flush sent and was answered, or its command
	Memcached   *MemcachedDetail `json:"memcached,omitempty"`  // the flush_all a Memcached was sent
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *FlushDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[FlushDetail]{
		figure.CountOf("keys_flushed", func(d *FlushDetail) *int64 { return &d.KeysFlushed }),
		figure.Nullable("http_cache", func(d *FlushDetail) **CacheAnswers { return &d.HTTPCache }, cacheAnswers).OmitEmpty(),
		figure.Nullable("memcached", func(d *FlushDetail) **MemcachedDetail { return &d.Memcached }, memcachedDetail).OmitEmpty(),
	})
}

var (
	_ Trigger  = (*Flush)(nil)
	_ Requirer = (*Flush)(nil)
)

func (*Flush) Name() string { return "flush" }

// Detail is an empty FlushDetail, into which results are read.
func (*Flush) Detail() any { return &FlushDetail{} }
func (*Flush) Describe() string {
	return "empties the cache at T: FLUSHDB on the testbed's Redis (a target's: every key of its pattern), flush_all on a Memcached (allow_flush_all), an HTTP cache's flush request or command: a cold cache, as after a restart without persistence"
}

// Requires a Redis and a pattern unless herdbench owns it, or an HTTP
// cache's flush.
func (*Flush) Requires(c Caps) error {
	switch {
	case c.Memcached && !c.FlushAll:
		return fmt.Errorf("%s: true to empty the target's Memcached: flush_all empties every item of the instance, the service's and any other's (accepted: allow_flush_all: true under memcached, or the expire trigger, which deletes only the hot keys' items)",
			c.at("memcached.allow_flush_all"))
	case c.HTTPFlush, c.Memcached:
		return nil
	case !c.Redis:
		return errors.New("a Redis (redis.address in the target file), a Memcached (memcached.address, with allow_flush_all), or an HTTP cache's flush (http_cache.flush)")
	case !c.Pattern:
		return errors.New("the pattern of the only keys it may remove (redis.pattern in the target file)")
	}
	return nil
}

func (*Flush) Plan(env Env) string {
	return joinPlans(cachesThat(env, Cache.Flushes), Cache.DescribeFlush)
}

// Fire empties every cache that may be emptied, in turn: the Redis the
// service uses (all of it on the testbed, the keys matching the pattern
// elsewhere), its Memcached, the HTTP cache.
func (*Flush) Fire(ctx context.Context, env Env) (Fired, error) {
	flushes := cachesThat(env, Cache.Flushes)
	if len(flushes) == 0 {
		return Fired{}, errors.New("flush: the target declares no Redis with a pattern, no Memcached and no HTTP cache's flush")
	}
	d := &FlushDetail{}
	var ended time.Time // the last cache's flush answered: a cache that reads on after it says when
	for _, c := range flushes {
		t, err := c.Flush(ctx, env)
		d.add(t)
		ended = cmp.Or(t.Emptied, time.Now())
		if err != nil {
			return Fired{Detail: d, Ended: ended}, fmt.Errorf("flush: %w", err)
		}
	}
	return Fired{Detail: d, Ended: ended}, nil
}

// add is what a cache flushed: the keys it removed (and the pattern they
// were limited to), and its own record.
func (d *FlushDetail) add(t Touched) {
	d.KeysFlushed += t.Removed
	d.Pattern = cmp.Or(t.Pattern, d.Pattern)
	d.Memcached, d.HTTPCache = cmp.Or(t.Memcached, d.Memcached), cmp.Or(t.HTTPCache, d.HTTPCache)
}
