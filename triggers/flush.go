package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"
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

var (
	_ Trigger  = (*Flush)(nil)
	_ Requirer = (*Flush)(nil)
)

func (*Flush) Name() string { return "flush" }

// Detail is an empty FlushDetail, into which results are read.
func (*Flush) Detail() any { return &FlushDetail{} }
func (*Flush) Describe() string {
	return "FLUSHDB at T (on a target's Redis: every key of its pattern; an HTTP cache: its flush request or command): a cold cache, as after a restart without persistence"
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
	var parts []string
	switch {
	case env.Owned:
		parts = append(parts, "FLUSHDB on the testbed's Redis")
	case env.Redis != nil || env.Pattern != "":
		parts = append(parts, fmt.Sprintf("SCAN MATCH %s and UNLINK every key it finds (only keys matching the pattern)", env.Pattern))
	}
	if env.Memcached != nil {
		parts = append(parts, "flush_all on the Memcached (every item of it)")
	}
	if c := env.HTTPCache; c != nil && c.Flush != nil {
		parts = append(parts, c.Describe(*c.Flush))
	} else if c != nil && c.Run != "" {
		parts = append(parts, fmt.Sprintf("run %q (sh -c, on this machine, at most %s)", c.Run, c.Limit))
	}
	return joinPlans(parts)
}

// Fire flushes the database the service uses (all of it on the testbed,
// the keys matching the pattern elsewhere), and the HTTP cache.
func (f *Flush) Fire(ctx context.Context, env Env) (Fired, error) {
	var d *FlushDetail
	if env.Redis != nil && (env.Owned || env.Pattern != "") {
		fired, err := f.flushRedis(ctx, env)
		if err != nil {
			return fired, err
		}
		d = fired.Detail.(*FlushDetail)
	}
	if m := env.Memcached; m != nil {
		if d == nil {
			d = &FlushDetail{}
		}
		md, err := m.FlushAll()
		d.Memcached = &md
		if err != nil {
			return Fired{Detail: d, Ended: time.Now()}, fmt.Errorf("flush: %w", err)
		}
	}
	if c := env.HTTPCache; c != nil && (c.Flush != nil || c.Run != "") {
		if d == nil {
			d = &FlushDetail{}
		}
		a, err := c.FlushAll(ctx, Environ(env))
		d.HTTPCache = &a
		if err != nil {
			return Fired{Detail: d, Ended: time.Now()}, fmt.Errorf("flush: %w", err)
		}
	}
	if d == nil {
		return Fired{}, errors.New("flush: the target declares no Redis with a pattern, no Memcached and no HTTP cache's flush")
	}
	return Fired{Detail: d, Ended: time.Now()}, nil
}

// flushRedis flushes the Redis the service uses.
func (*Flush) flushRedis(ctx context.Context, env Env) (Fired, error) {
	if env.Owned {
		n, err := env.Redis.DBSize(ctx).Result()
		if err != nil {
			return Fired{}, fmt.Errorf("flush: count keys: %w", err)
		}
		if err := env.Redis.FlushDB(ctx).Err(); err != nil {
			return Fired{}, fmt.Errorf("flush: %w", err)
		}
		return Fired{Detail: &FlushDetail{KeysFlushed: n}, Ended: time.Now()}, nil
	}
	if env.Pattern == "" {
		return Fired{}, errors.New("flush: the target declares no pattern of keys it may touch")
	}
	n, err := unlinkMatching(ctx, env)
	if err != nil {
		return Fired{}, fmt.Errorf("flush %s: %w", env.Pattern, err)
	}
	return Fired{Detail: &FlushDetail{KeysFlushed: n, Pattern: env.Pattern}, Ended: time.Now()}, nil
}

// unlinkMatching unlinks every key matching env.Pattern, a thousand at a
// time, and returns how many it removed.
func unlinkMatching(ctx context.Context, env Env) (int64, error) {
	var n int64
	iter := env.Redis.Scan(ctx, 0, env.Pattern, 1000).Iterator()
	var batch []string
	unlink := func() error {
		if len(batch) == 0 {
			return nil
		}
		m, err := env.Redis.Unlink(ctx, batch...).Result()
		n += m
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if k := iter.Val(); MatchPattern(env.Pattern, k) { // SCAN's match, checked again
			batch = append(batch, k)
		}
		if len(batch) == 1000 {
			if err := unlink(); err != nil {
				return n, fmt.Errorf("unlink: %w", err)
			}
		}
	}
	return n, errors.Join(iter.Err(), unlink())
}
