package targets

import (
	"context"
	"net"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/stores/memcached"
)

// MemcachedSpec is the target's Memcached, for observing its stats and
// for the triggers that touch the hot keys' items. It has no pattern of
// keys as Redis has: a trigger touches only the hot keys' items, and the
// whole instance (flush_all) only when AllowFlushAll says it may.
type MemcachedSpec struct {
	Address string `yaml:"address"` // host:port
	Key     string `yaml:"key"`     // the item of a request's key, such as item:{key}
	// AllowFlushAll lets the flush trigger empty the instance whole
	// (flush_all): every item, the service's and any other's
	AllowFlushAll bool `yaml:"allow_flush_all"`
}

// memcachedKeyMax is the longest key Memcached takes.
const memcachedKeyMax = 250

func (c *checker) memcached() {
	m := c.f.Memcached
	if m == nil {
		return
	}
	if c.f.Redis != nil {
		c.bad("memcached", "beside redis (accepted: one cache per target, redis or memcached: cache.* would mix them)")
	}
	if _, port, err := net.SplitHostPort(m.Address); err != nil {
		c.bad("memcached.address", "%q is not host:port (accepted: such as 127.0.0.1:11211)", m.Address)
	} else if err := herd.CheckPort(port); err != nil {
		c.bad("memcached.address", "%q: %v", m.Address, err)
	}
	if m.Key == "" {
		return
	}
	switch {
	case !strings.Contains(m.Key, "{key}"):
		c.bad("memcached.key", "%q has no {key} (accepted: the Memcached key of a request's key, such as item:{key})", m.Key)
	case strings.IndexFunc(m.Key, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		c.bad("memcached.key", "%q has a space or a control character (accepted: printable characters only, as Memcached's keys)", m.Key)
	case len(m.Key) > memcachedKeyMax:
		c.bad("memcached.key", "%d bytes (accepted: at most %d with the key in it)", len(m.Key), memcachedKeyMax)
	}
}

// OpenMemcached opens the Memcached at addr as the target's: a client for
// the triggers and a stats reader, and checks it answers.
func (t *Target) OpenMemcached(ctx context.Context, addr string) (err error) {
	t.Memcached, err = memcached.Open(ctx, addr)
	return err
}

// memcachedItems is the target's Memcached as triggers touch it, nil when
// it declares none. Before Connect its client is nil: enough for a dry
// run's plan, which contacts nothing.
func (t *Target) memcachedItems() *memcached.Cache {
	if tmpl := t.Grants.OwnedItems; tmpl != "" { // herdbench's own: every item is its
		return &memcached.Cache{Client: t.Memcached, AllowFlushAll: true, Key: func(key string) string { return strings.ReplaceAll(tmpl, "{key}", key) }}
	}
	if t.file == nil || t.file.Memcached == nil {
		return nil
	}
	m := &memcached.Cache{Client: t.Memcached, AllowFlushAll: t.file.Memcached.AllowFlushAll}
	if tmpl := t.file.Memcached.Key; tmpl != "" {
		m.Key = func(key string) string { return strings.ReplaceAll(tmpl, "{key}", key) }
	}
	return m
}
