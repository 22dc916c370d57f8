package triggers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Notify broadcasts an invalidation of the hot keys at T on the replicas'
// pub/sub channel: every replica wakes and reloads them at once.
type Notify struct{}

// NotifyDetail is what notify did.
type NotifyDetail struct {
	Keys      int   `json:"keys"`
	Receivers int64 `json:"receivers"` // subscribers that got the message
}

var (
	_ Trigger  = (*Notify)(nil)
	_ Requirer = (*Notify)(nil)
)

func (*Notify) Name() string { return "notify" }

// Detail is an empty NotifyDetail, into which results are read.
func (*Notify) Detail() any { return &NotifyDetail{} }
func (*Notify) Describe() string {
	return "a broadcast invalidation of the hot keys at T: every replica reloads them at once"
}

// Requires a Redis and its invalidation channel.
func (*Notify) Requires(c Caps) error {
	switch {
	case (!c.Redis || !c.Channel) && c.At != nil:
		return errors.New("a Redis and the channel the service listens on for invalidations (redis.address and redis.invalidate_channel in the target file)")
	case !c.Redis || !c.Channel:
		return errors.New("a Redis the replicas read their items from, and a channel they listen on for invalidations")
	}
	return nil
}

func (*Notify) Plan(env Env) string {
	return fmt.Sprintf("PUBLISH the %d hot keys on channel %s: %s", len(env.HotKeys), env.Channel, list(env.HotKeys))
}

// Fire publishes the hot keys on the target's channel.
func (*Notify) Fire(ctx context.Context, env Env) (Fired, error) {
	n, err := env.Redis.Publish(ctx, env.Channel, strings.Join(env.HotKeys, ",")).Result()
	if err != nil {
		return Fired{}, fmt.Errorf("notify: publish: %w", err)
	}
	return Fired{Detail: &NotifyDetail{Keys: len(env.HotKeys), Receivers: n}, Ended: time.Now()}, nil
}
