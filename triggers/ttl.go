package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TTL warms the hot keys together with a TTL that ends at T, so they expire
// by themselves at T, as keys filled by one deploy or one cron run do; the
// reloads get the arm's TTL and expire again together every TTL after that,
// unless something (ttl_jitter, xfetch) breaks the alignment. In
// Memcached, which keeps whole seconds, the items expire at the first
// second at or after T (touch with an absolute expiry).
type TTL struct {
	aligned *MemcachedDetail // what Align did to a Memcached, for Fire's detail
}

// TTLDetail is what ttl did.
type TTLDetail struct {
	Keys      int              `json:"keys"`                // hot keys made to expire at T
	Memcached *MemcachedDetail `json:"memcached,omitempty"` // the touches a Memcached was sent before the load
}

var (
	_ Trigger  = (*TTL)(nil)
	_ Aligner  = (*TTL)(nil)
	_ Requirer = (*TTL)(nil)
)

func (*TTL) Name() string { return "ttl" }

// Detail is an empty TTLDetail, into which results are read.
func (*TTL) Detail() any { return &TTLDetail{} }
func (*TTL) Describe() string {
	return "hot keys warmed together expire by themselves at T, then every TTL"
}

// Requires a Redis and its keys, or a Memcached and its key.
func (*TTL) Requires(c Caps) error {
	if c.MemcachedKeys {
		return nil
	}
	if c.Memcached {
		return errors.New("the Memcached item of a request's key (memcached.key in the target file, such as item:{key})")
	}
	return needKeys(c)
}

func (*TTL) Plan(env Env) string {
	var parts []string
	if env.RedisKey != nil {
		keys := HotRedisKeys(env)
		parts = append(parts, fmt.Sprintf("PEXPIREAT T on %d Redis keys (the hot keys matching %s) before the load: %s", len(keys), env.Pattern, list(keys)))
	}
	if m := env.Memcached; m.keyed() {
		parts = append(parts, fmt.Sprintf("touch %d Memcached items (the hot keys) to expire at T's second before the load: %s",
			len(env.HotKeys), list(m.Items(env.HotKeys))))
	}
	return joinPlans(parts)
}

// WarmTTL gives the warmed keys a TTL that ends at T, as nearly as the
// warm can know it: what the replicas store as the expiry (xfetch reads it)
// is the warm instant plus this TTL, up to the warm's length before T.
func (*TTL) WarmTTL(untilT time.Duration) time.Duration { return untilT }

// Align makes the hot keys expire in Redis exactly at T, and in Memcached
// at T's second: the warm took time, and each key's TTL started when it
// was loaded.
func (t *TTL) Align(ctx context.Context, env Env) error {
	t.aligned = nil
	if m := env.Memcached; m.keyed() {
		d, err := m.ExpireAt(ctx, env.HotKeys, env.T)
		if err != nil {
			return fmt.Errorf("align the hot keys' expiry at T: %w", err)
		}
		t.aligned = &d
	}
	if env.RedisKey == nil {
		return nil
	}
	_, err := env.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range HotRedisKeys(env) {
			p.PExpireAt(ctx, k, env.T)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("align the hot keys' expiry at T: %w", err)
	}
	return nil
}

// Fire does nothing: the keys expire by themselves. It reads nothing from
// Redis either, so the cache figures are the herd's alone.
func (t *TTL) Fire(ctx context.Context, env Env) (Fired, error) {
	d := &TTLDetail{Memcached: t.aligned}
	if env.RedisKey != nil {
		d.Keys = len(HotRedisKeys(env))
	}
	if env.Memcached.keyed() {
		d.Keys = len(env.HotKeys)
	}
	return Fired{Detail: d, Ended: time.Now()}, nil
}
