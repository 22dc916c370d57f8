package triggers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/figure"
)

// TTL warms the hot keys together with a TTL that ends at T, so they expire
// by themselves at T, as keys filled by one deploy or one cron run do; the
// reloads get the arm's TTL and expire again together every TTL after that,
// unless something (ttl_jitter, xfetch) breaks the alignment. In
// Memcached, which keeps whole seconds, the items expire at the first
// second at or after T (touch with an absolute expiry).
type TTL struct {
	aligned TTLDetail // what Align did, for Fire's detail
}

// TTLDetail is what ttl did.
type TTLDetail struct {
	Keys int `json:"keys"` // hot keys made to expire at T
	// Missing are the hot keys the cache did not hold when their expiry
	// was pinned to T: never cached (a service's key it does not have),
	// or expired before (on the testbed, a warm that ended more than
	// warmup + before, its TTL, before the load was ready); the load
	// loads them before T, not in the herd
	Missing   int              `json:"missing,omitempty"`
	Memcached *MemcachedDetail `json:"memcached,omitempty"` // the touches a Memcached was sent before the load
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *TTLDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[TTLDetail]{
		figure.CountOf("keys", func(d *TTLDetail) *int { return &d.Keys }),
		figure.CountOf("missing", func(d *TTLDetail) *int { return &d.Missing }).OmitEmpty(),
		figure.Nullable("memcached", func(d *TTLDetail) **MemcachedDetail { return &d.Memcached }, memcachedDetail).OmitEmpty(),
	})
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
	return joinPlans(expirers(env), func(e Expirer) string { return e.DescribeExpireAt(env.HotKeys) })
}

// WarmTTL gives the warmed keys a TTL that ends at T, as nearly as the
// warm can know it: what the replicas store as the expiry (xfetch reads it)
// is the warm instant plus this TTL, up to the warm's length before T.
func (*TTL) WarmTTL(untilT time.Duration) time.Duration { return untilT }

// Align makes the hot keys expire exactly at T in every cache that can
// (in Memcached at T's second): the warm took time, and each key's TTL
// started when it was loaded.
func (t *TTL) Align(ctx context.Context, env Env) error {
	t.aligned = TTLDetail{}
	for _, c := range expirers(env) {
		done, err := c.ExpireAt(ctx, env.HotKeys, env.T)
		if err != nil {
			return fmt.Errorf("align the hot keys' expiry at T: %w", err)
		}
		t.aligned.Keys = done.Keys
		if done.Found != nil {
			t.aligned.Missing = done.Keys - *done.Found
		}
		if m := done.Memcached; m != nil {
			t.aligned.Memcached = m
			if m.Found != nil {
				t.aligned.Missing = m.Sent - *m.Found
			}
		}
	}
	return nil
}

// Fire does nothing: the keys expire by themselves. It reads nothing from
// the cache either, so the cache figures are the herd's alone; its detail
// is what Align did.
func (t *TTL) Fire(context.Context, Env) (Fired, error) {
	f := Fired{Detail: new(t.aligned), Ended: time.Now()}
	if n := t.aligned.Missing; n > 0 {
		f.Warnings = []string{fmt.Sprintf("ttl: %d of %d hot keys were not in the cache when their expiry was pinned to T "+
			"(never cached, or expired before the load was ready: a warm that took longer than warmup + before); "+
			"they reloaded before T, outside the herd (trigger.detail.missing)", n, t.aligned.Keys)}
	}
	return f, nil
}

// expirers are the caches of env whose hot keys' entries can be made to
// expire at T, in order.
func expirers(env Env) []Expirer {
	return cachesThat(env, func(e Expirer) bool { return e.(Cache).Keyed() })
}
