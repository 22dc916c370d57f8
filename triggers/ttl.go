package triggers

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TTL warms the hot keys together with a TTL that ends at T, so they expire
// by themselves at T, as keys filled by one deploy or one cron run do; the
// reloads get the arm's TTL and expire again together every TTL after that,
// unless something (ttl_jitter, xfetch) breaks the alignment.
type TTL struct{}

// TTLDetail is what ttl did.
type TTLDetail struct {
	Keys int `json:"keys"` // hot keys made to expire at T
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

// Requires a Redis and its keys.
func (*TTL) Requires(c Caps) error { return needKeys(c) }

func (*TTL) Plan(env Env) string {
	keys := HotRedisKeys(env)
	return fmt.Sprintf("PEXPIREAT T on %d Redis keys (the hot keys matching %s) before the load: %s", len(keys), env.Pattern, list(keys))
}

// WarmTTL gives the warmed keys a TTL that ends at T, as nearly as the
// warm can know it: what the replicas store as the expiry (xfetch reads it)
// is the warm instant plus this TTL, up to the warm's length before T.
func (*TTL) WarmTTL(untilT time.Duration) time.Duration { return untilT }

// Align makes the hot keys expire in Redis exactly at T: the warm took
// time, and each key's TTL started when it was loaded.
func (*TTL) Align(ctx context.Context, env Env) error {
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
func (*TTL) Fire(ctx context.Context, env Env) (Fired, error) {
	return Fired{Detail: &TTLDetail{Keys: len(HotRedisKeys(env))}, Ended: time.Now()}, nil
}
