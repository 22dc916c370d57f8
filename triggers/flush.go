package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Flush empties the cache at T, as a Redis restart without persistence
// does: a cold-start stampede over every key. On a Redis herdbench did not
// start, it removes only the keys the target's pattern lets it touch.
type Flush struct{}

// FlushDetail is what flush did.
type FlushDetail struct {
	KeysFlushed int64  `json:"keys_flushed"`
	Pattern     string `json:"pattern,omitempty"` // the keys it was limited to, on a Redis herdbench did not start
}

var (
	_ Trigger  = (*Flush)(nil)
	_ Requirer = (*Flush)(nil)
)

func (*Flush) Name() string { return "flush" }

// Detail is an empty FlushDetail, into which results are read.
func (*Flush) Detail() any { return &FlushDetail{} }
func (*Flush) Describe() string {
	return "FLUSHDB at T (on a target's Redis: every key of its pattern): a cold cache, as after a Redis restart without persistence"
}

// Requires a Redis, and a pattern unless herdbench owns it.
func (*Flush) Requires(c Caps) error {
	switch {
	case !c.Redis:
		return errors.New("a Redis (redis.address in the target file)")
	case !c.Pattern:
		return errors.New("the pattern of the only keys it may remove (redis.pattern in the target file)")
	}
	return nil
}

func (*Flush) Plan(env Env) string {
	if env.Owned {
		return "FLUSHDB on the testbed's Redis"
	}
	return fmt.Sprintf("SCAN MATCH %s and UNLINK every key it finds (only keys matching the pattern)", env.Pattern)
}

// Fire flushes the database the service uses: all of it on the testbed,
// the keys matching the pattern elsewhere.
func (*Flush) Fire(ctx context.Context, env Env) (Fired, error) {
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
