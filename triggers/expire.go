package triggers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/figure"
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

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *ExpireDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[ExpireDetail]{
		figure.CountOf("keys", func(d *ExpireDetail) *int { return &d.Keys }),
		figure.CountOf("keys_removed", func(d *ExpireDetail) *int64 { return &d.KeysRemoved }),
		figure.Nullable("http_cache", func(d *ExpireDetail) **CacheAnswers { return &d.HTTPCache }, cacheAnswers).OmitEmpty(),
		figure.Nullable("memcached", func(d *ExpireDetail) **MemcachedDetail { return &d.Memcached }, memcachedDetail).OmitEmpty(),
	})
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
	return joinPlans(cachesThat(env, Cache.Keyed), func(c Cache) string { return c.DescribeDelete(env.HotKeys) })
}

// Fire deletes the hot keys from every cache that knows their entries, in
// turn: their fresh copies in Redis (stale copies stay), their items in
// Memcached, their pages in the HTTP cache.
func (*Expire) Fire(ctx context.Context, env Env) (Fired, error) {
	keyed := cachesThat(env, Cache.Keyed)
	if len(keyed) == 0 {
		return Fired{}, errors.New("expire: the target declares no http_cache, no Redis keys and no Memcached")
	}
	d := &ExpireDetail{}
	for _, c := range keyed {
		t, err := c.Delete(ctx, env.HotKeys)
		d.add(t)
		if err != nil {
			return Fired{Detail: d, Ended: time.Now()}, fmt.Errorf("expire: %w", err)
		}
	}
	return Fired{Detail: d, Ended: time.Now()}, nil
}

// add is what a cache deleted: the keys it acted on (the last cache's:
// a Redis counts only the hot keys its pattern lets it touch), the
// entries it removed, and its own record.
func (d *ExpireDetail) add(t Touched) {
	d.Keys, d.KeysRemoved = t.Keys, d.KeysRemoved+t.Removed
	d.Memcached, d.HTTPCache = cmp.Or(t.Memcached, d.Memcached), cmp.Or(t.HTTPCache, d.HTTPCache)
}
