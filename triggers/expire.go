package triggers

import (
	"context"
	"fmt"

	"github.com/herdbench/herdbench/testbed/api"
)

// Expire invalidates the hot keys at T, as a deploy or a write path that
// deletes cache entries does: every hot key misses at once.
type Expire struct{}

var _ Trigger = Expire{}

func (Expire) Name() string     { return "expire" }
func (Expire) Describe() string { return "hot keys invalidated at T (UNLINK)" }

// Fire unlinks the hot keys' fresh copies; stale copies stay.
func (Expire) Fire(ctx context.Context, env Env) (Detail, error) {
	keys := hotKeys(env)
	n, err := env.Redis.Unlink(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("expire: unlink %d hot keys: %w", len(keys), err)
	}
	return Detail{"keys": len(keys), "keys_removed": n}, nil
}

func hotKeys(env Env) []string {
	keys := make([]string, len(env.HotKeys))
	for i, id := range env.HotKeys {
		keys[i] = api.ItemKey(id)
	}
	return keys
}
