package triggers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Expire invalidates the hot keys at T, as a deploy or a write path that
// deletes cache entries does: every hot key misses at once. It unlinks
// them in Redis, deletes them in Memcached, purges them from an HTTP cache
// in front of the service (http_cache): each the target declares.
type Expire struct{}

// ExpireDetail is what expire did.
type ExpireDetail struct {
	Keys        int              `json:"keys"`                 // hot keys it may touch
	KeysRemoved int64            `json:"keys_removed"`         // of them, in Redis, or Memcached, at T
	HTTPCache   *CacheAnswers    `json:"http_cache,omitempty"` // the purges an HTTP cache was sent, and its answers
	Memcached   *MemcachedDetail `json:"memcached,omitempty"`  // the deletes a Memcached was sent
}

var (
	_ Trigger  = (*Expire)(nil)
	_ Requirer = (*Expire)(nil)
)

func (*Expire) Name() string { return "expire" }

// Detail is an empty ExpireDetail, into which results are read.
func (*Expire) Detail() any { return &ExpireDetail{} }
func (*Expire) Describe() string {
	return "hot keys invalidated at T (UNLINK, or an HTTP cache's purge)"
}

// Requires a Redis and its keys, a Memcached and its key, or an HTTP
// cache that purges one key.
func (*Expire) Requires(c Caps) error {
	if c.HTTPPurge || c.MemcachedKeys {
		return nil
	}
	if c.Memcached {
		return errors.New("the Memcached item of a request's key (memcached.key in the target file, such as item:{key})")
	}
	if err := needKeys(c); err != nil {
		return fmt.Errorf("%w, a Memcached's key (memcached.key), or an HTTP cache's purge request (http_cache.purge in the target file)", err)
	}
	return nil
}

func (*Expire) Plan(env Env) string {
	var parts []string
	if env.RedisKey != nil {
		keys := HotRedisKeys(env)
		parts = append(parts, fmt.Sprintf("UNLINK %d Redis keys (the hot keys matching %s): %s", len(keys), env.Pattern, list(keys)))
	}
	if m := env.Memcached; m.keyed() {
		parts = append(parts, fmt.Sprintf("delete %d Memcached items (the hot keys): %s", len(env.HotKeys), list(m.Items(env.HotKeys))))
	}
	if c := env.HTTPCache; c != nil {
		parts = append(parts, fmt.Sprintf("%s, with the arm's selection, for each of %d hot keys: %s", c.Describe(c.Purge), len(env.HotKeys), list(env.HotKeys)))
	}
	return joinPlans(parts)
}

// Fire unlinks the hot keys' fresh copies in Redis (stale copies stay),
// deletes their items in Memcached, and purges them from the HTTP cache.
func (*Expire) Fire(ctx context.Context, env Env) (Fired, error) {
	d := &ExpireDetail{}
	if env.RedisKey != nil {
		keys := HotRedisKeys(env)
		if len(keys) > 0 {
			n, err := env.Redis.Unlink(ctx, keys...).Result()
			if err != nil {
				return Fired{}, fmt.Errorf("expire: unlink %d hot keys: %w", len(keys), err)
			}
			d.Keys, d.KeysRemoved = len(keys), n
		}
	}
	if m := env.Memcached; m.keyed() {
		md, err := m.Delete(ctx, env.HotKeys)
		d.Keys, d.KeysRemoved, d.Memcached = len(env.HotKeys), d.KeysRemoved+int64(md.Found), &md
		if err != nil {
			return Fired{Detail: d, Ended: time.Now()}, fmt.Errorf("expire: %w", err)
		}
	}
	if c := env.HTTPCache; c != nil {
		a, err := c.PurgeKeys(ctx, env.HotKeys)
		d.Keys, d.HTTPCache = len(env.HotKeys), &a
		if err != nil {
			return Fired{Detail: d, Ended: time.Now()}, fmt.Errorf("expire: %w", err)
		}
	} else if env.RedisKey == nil && !env.Memcached.keyed() {
		return Fired{}, fmt.Errorf("expire: %w, no Redis keys and no Memcached", errNoHTTPCache)
	}
	return Fired{Detail: d, Ended: time.Now()}, nil
}

// joinPlans joins what a trigger does to each part of a target.
func joinPlans(parts []string) string {
	if len(parts) == 0 {
		return "nothing: the target declares no cache it may touch"
	}
	return strings.Join(parts, "; and ")
}
