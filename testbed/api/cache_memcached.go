package api

import (
	"context"
	"errors"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"golang.org/x/sync/errgroup"

	"github.com/herdbench/herdbench/testbed/replica"
)

// memcachedCache is the Cache on Memcached. A claim is an add (stored
// only when the key holds nothing); a release and the lease's set are a
// gets and a cas on the claim's key, which fails once anyone changed it
// since, so neither touches another holder's claim.
//
// Memcached counts expiries in whole seconds, on a clock that ticks once
// a second, so an exptime of N seconds ends between N-1 and N+1 seconds
// after the set. An entry must never end before the expiry its Entry
// records (xfetch and early read it), nor a claim before its TTL: every
// TTL is rounded up to whole seconds, plus one. An entry of ttl 1ms thus
// lives between 1 and 3 seconds, one of 60s between 60 and 62. Memcached
// reads an exptime over 30 days as a Unix time: replica.Options.CacheProblems
// refuses such TTLs. Its keys are at most 250 bytes: the cache's are at
// most 30 (cache.go).
//
// The client has no contexts: each command is bounded by the timeout,
// and one whose context ended already is not sent.
type memcachedCache struct{ mc *memcache.Client }

var _ Cache = (*memcachedCache)(nil)

// setParallel bounds the sets a batch sends at once: memcached's text
// protocol has no multi-key set, so a fill's batch is many round trips.
const setParallel = 8

func newMemcachedCache(o CacheOptions) *memcachedCache {
	mc := memcache.New(o.Addr)
	mc.Timeout = o.Timeout
	mc.MaxIdleConns = o.Pool
	return &memcachedCache{mc: mc}
}

// expiry is ttl as memcached's exptime: whole seconds, rounded up, plus
// the second memcached's clock may end it early; at most 30 days.
func expiry(ttl time.Duration) int32 {
	ttl = min(max(ttl, 0), replica.MaxMemcachedTTL)
	return int32((ttl+time.Second-1)/time.Second + 1)
}

// expireNow is an exptime memcached reads as already past: a cas with it
// deletes the key if it still holds what was read.
const expireNow = -1

func (c *memcachedCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	it, err := c.mc.Get(key)
	switch {
	case errors.Is(err, memcache.ErrCacheMiss):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return it.Value, true, nil
}

func (c *memcachedCache) Set(ctx context.Context, entries ...CacheEntry) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(setParallel)
	for _, e := range entries {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return c.mc.Set(&memcache.Item{Key: e.Key, Value: e.Value, Expiration: expiry(e.TTL)})
		})
	}
	return g.Wait()
}

func (c *memcachedCache) Add(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	err := c.mc.Add(&memcache.Item{Key: key, Value: []byte(value), Expiration: expiry(ttl)})
	if errors.Is(err, memcache.ErrNotStored) {
		return false, nil
	}
	return err == nil, err
}

// held reads key's item if it holds value, with the cas id to change it.
func (c *memcachedCache) held(key, value string) (*memcache.Item, error) {
	it, err := c.mc.Get(key)
	if errors.Is(err, memcache.ErrCacheMiss) || (err == nil && string(it.Value) != value) {
		return nil, nil
	}
	return it, err
}

// casLost are cas's answers when the key changed or went since the gets.
func casLost(err error) bool {
	return errors.Is(err, memcache.ErrCASConflict) || errors.Is(err, memcache.ErrNotStored) || errors.Is(err, memcache.ErrCacheMiss)
}

func (c *memcachedCache) DeleteIfEqual(_ context.Context, key, value string) error {
	it, err := c.held(key, value)
	if it == nil || err != nil {
		return err
	}
	it.Expiration = expireNow
	if err := c.mc.CompareAndSwap(it); err != nil && !casLost(err) {
		return err
	}
	return nil
}

// SetIfHeld proves the lease is still the holder's with a cas on its key
// (keeping its token until the claim ends), then stores entries. The cas
// is atomic; the sets after it are not part of it (memcached has no
// multi-key transaction), which only matters if the lease ends in
// between: the cas just renewed it to its end, a second or more ahead.
func (c *memcachedCache) SetIfHeld(ctx context.Context, cl Claim, entries ...CacheEntry) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	it, err := c.held(cl.Key, cl.Token)
	if it == nil || err != nil {
		return false, err
	}
	it.Expiration = expiry(time.Until(cl.Expires))
	if err := c.mc.CompareAndSwap(it); err != nil {
		if casLost(err) {
			return false, nil
		}
		return false, err
	}
	return true, c.Set(ctx, entries...)
}

func (c *memcachedCache) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.mc.Delete(k); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
			return err
		}
	}
	return nil
}

func (c *memcachedCache) Flush(context.Context) error { return c.mc.FlushAll() }
func (c *memcachedCache) Ping(context.Context) error  { return c.mc.Ping() }
func (c *memcachedCache) Close() error                { return c.mc.Close() }
