package triggers

import (
	"context"
	"fmt"
	"time"
)

// Expire invalidates the hot keys at T, as a deploy or a write path that
// deletes cache entries does: every hot key misses at once.
type Expire struct{}

// ExpireDetail is what expire did.
type ExpireDetail struct {
	Keys        int   `json:"keys"`         // hot keys it may touch
	KeysRemoved int64 `json:"keys_removed"` // of them, in Redis at T
}

var (
	_ Trigger  = (*Expire)(nil)
	_ Requirer = (*Expire)(nil)
)

func (*Expire) Name() string { return "expire" }

// Detail is an empty ExpireDetail, into which results are read.
func (*Expire) Detail() any      { return &ExpireDetail{} }
func (*Expire) Describe() string { return "hot keys invalidated at T (UNLINK)" }

// Requires a Redis and its keys.
func (*Expire) Requires(c Caps) error { return needKeys(c) }

func (*Expire) Plan(env Env) string {
	keys := HotRedisKeys(env)
	return fmt.Sprintf("UNLINK %d Redis keys (the hot keys matching %s): %s", len(keys), env.Pattern, list(keys))
}

// Fire unlinks the hot keys' fresh copies; stale copies stay.
func (*Expire) Fire(ctx context.Context, env Env) (Fired, error) {
	keys := HotRedisKeys(env)
	if len(keys) == 0 {
		return Fired{Detail: &ExpireDetail{}, Ended: time.Now()}, nil
	}
	n, err := env.Redis.Unlink(ctx, keys...).Result()
	if err != nil {
		return Fired{}, fmt.Errorf("expire: unlink %d hot keys: %w", len(keys), err)
	}
	return Fired{Detail: &ExpireDetail{Keys: len(keys), KeysRemoved: n}, Ended: time.Now()}, nil
}
