package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/figure"
)

// Notify broadcasts an invalidation of the hot keys at T on the replicas'
// pub/sub channel: every replica wakes and reloads them at once.
type Notify struct{}

// NotifyDetail is what notify did.
type NotifyDetail struct {
	Keys      int   `json:"keys"`
	Receivers int64 `json:"receivers"` // subscribers that got the message
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *NotifyDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[NotifyDetail]{
		figure.CountOf("keys", func(d *NotifyDetail) *int { return &d.Keys }),
		figure.CountOf("receivers", func(d *NotifyDetail) *int64 { return &d.Receivers }),
	})
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
	return joinPlans(cachesThat(env, Broadcaster.Broadcasts), func(b Broadcaster) string { return b.DescribeBroadcast(env.HotKeys) })
}

// Fire publishes the hot keys on every channel the target names.
func (*Notify) Fire(ctx context.Context, env Env) (Fired, error) {
	bs := cachesThat(env, Broadcaster.Broadcasts)
	if len(bs) == 0 {
		return Fired{}, errors.New("notify: the target declares no Redis channel for invalidations")
	}
	d := &NotifyDetail{Keys: len(env.HotKeys)}
	for _, b := range bs {
		n, err := b.Broadcast(ctx, env.HotKeys)
		if err != nil {
			return Fired{}, fmt.Errorf("notify: %w", err)
		}
		d.Receivers += n
	}
	return Fired{Detail: d, Ended: time.Now()}, nil
}
