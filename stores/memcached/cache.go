package memcached

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/herdbench/herdbench/triggers"
)

// Cache is a Memcached as triggers touch it: the items of the hot
// keys (expire deletes them, ttl makes them expire at T), and the whole
// instance (flush_all) only when AllowFlushAll says it may. Its commands
// go one after another on the client's connection, so a trigger adds no
// connection storm of its own to the figures.
type Cache struct {
	Client        *Client
	Key           func(key string) string // the item of a request's key, such as item:{key}
	AllowFlushAll bool                    // flush_all empties every item of the instance, not only the service's
}

var (
	_ triggers.Cache   = (*Cache)(nil)
	_ triggers.Expirer = (*Cache)(nil)
)

// Keyed says whether m knows the item of a request's key: what expire and
// ttl need of it.
func (m *Cache) Keyed() bool { return m.Key != nil }

// Items are the Memcached keys of the hot keys, hottest first.
func (m *Cache) Items(hot []string) []string {
	out := make([]string, len(hot))
	for i, k := range hot {
		out[i] = m.Key(k)
	}
	return out
}

func (m *Cache) DescribeDelete(hot []string) string {
	return fmt.Sprintf("delete %d Memcached items (the hot keys): %s", len(hot), triggers.List(m.Items(hot)))
}

// Delete deletes the hot keys' items.
func (m *Cache) Delete(ctx context.Context, hot []string) (triggers.Touched, error) {
	d, err := m.each(ctx, "delete", hot, m.Client.items.Delete)
	return triggers.Touched{Keys: len(hot), Removed: int64(d.Found), Memcached: &d}, err
}

func (m *Cache) DescribeExpireAt(hot []string) string {
	return fmt.Sprintf("touch %d Memcached items (the hot keys) to expire at T's second before the load: %s", len(hot), triggers.List(m.Items(hot)))
}

// ExpireAt makes the hot keys' items expire at the first whole second at
// or after at (touch with an absolute expiry): Memcached keeps time in
// whole seconds of its own clock, which ticks once a second, so they
// expire within about a second after it, never before.
func (m *Cache) ExpireAt(ctx context.Context, hot []string, at time.Time) (triggers.Touched, error) {
	sec := at.Unix()
	if at.After(time.Unix(sec, 0)) {
		sec++
	}
	if sec > math.MaxInt32 {
		return triggers.Touched{}, fmt.Errorf("memcached: expiry %d is past what touch takes", sec)
	}
	d, err := m.each(ctx, "touch", hot, func(k string) error { return m.Client.items.Touch(k, int32(sec)) })
	d.ExpiresAt = sec
	return triggers.Touched{Keys: len(hot), Memcached: &d}, err
}

// Flushes is always true: a Memcached the target does not let be emptied
// refuses the flush when it is asked (errFlush), as the plan's
// validation did before the run.
func (m *Cache) Flushes() bool { return true }

func (m *Cache) DescribeFlush() string { return "flush_all on the Memcached (every item of it)" }

// Flush empties the whole instance (flush_all), when the target allows it.
func (m *Cache) Flush(context.Context, triggers.Env) (triggers.Touched, error) {
	if !m.AllowFlushAll {
		return triggers.Touched{Memcached: &triggers.MemcachedDetail{}}, errFlush
	}
	start := time.Now()
	err := m.Client.items.FlushAll()
	d := triggers.MemcachedDetail{Command: "flush_all", Sent: 1, TookMS: time.Since(start).Milliseconds()}
	if err != nil {
		return triggers.Touched{Memcached: &d}, fmt.Errorf("memcached flush_all: %w", err)
	}
	return triggers.Touched{Memcached: &d}, nil
}

// each sends command for each hot key's item, one after another; a key
// the cache did not hold is not an error.
func (m *Cache) each(ctx context.Context, command string, hot []string, do func(item string) error) (triggers.MemcachedDetail, error) {
	d := triggers.MemcachedDetail{Command: command}
	start := time.Now()
	for _, item := range m.Items(hot) {
		if err := ctx.Err(); err != nil {
			return d, err
		}
		d.Sent++
		switch err := do(item); {
		case err == nil:
			d.Found++
		case errors.Is(err, memcache.ErrCacheMiss):
		default:
			d.TookMS = time.Since(start).Milliseconds()
			return d, fmt.Errorf("memcached %s %s: %w", command, item, err)
		}
	}
	d.TookMS = time.Since(start).Milliseconds()
	return d, nil
}

// errFlush is flush asked of a Memcached the target does not let
// it empty.
var errFlush = errors.New("memcached: flush_all empties every item of the instance, and the target does not allow it (accepted: allow_flush_all: true under memcached)")
