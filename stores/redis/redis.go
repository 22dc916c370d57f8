// Package redis is herdbench's Redis: the client a target holds, the
// counters a sample reads of it (INFO, a stream's depth) and what
// triggers do to it (Cache). It is the only package that imports
// go-redis, the testbed's API server excepted.
//
// Guarantees: every figure read is a field INFO or XINFO answered, never
// a missing one read as zero; a trigger touches only the keys its
// pattern matches, unless the target grants FLUSHDB.
package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/observe"
)

// Client is a target's Redis, as herdbench holds it: go-redis' client,
// whose commands a test may send directly.
type Client struct{ *redis.Client }

var _ observe.Streams = (*Client)(nil)

// Connect opens the Redis at addr (host:port), database db, as a target
// file declares it, and pings it: the client, and the ping's error.
func Connect(ctx context.Context, addr string, db int, password string) (*Client, error) {
	c := &Client{redis.NewClient(&redis.Options{Addr: addr, DB: db, Password: password, DisableIdentity: true,
		DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})}
	return c, c.Ping(ctx).Err()
}

// OpenURL opens the Redis at a redis:// URL (the testbed's) and pings it;
// the client is set when the URL parses.
func OpenURL(ctx context.Context, addr string) (*Client, error) {
	opt, err := redis.ParseURL(addr)
	if err != nil {
		return nil, fmt.Errorf("redis url %q: %w", addr, err)
	}
	opt.DisableIdentity = true
	c := &Client{redis.NewClient(opt)}
	if err := c.Ping(ctx).Err(); err != nil {
		return c, fmt.Errorf("redis %s: %w", addr, err)
	}
	return c, nil
}

// Version reads redis_version from INFO. Each probe is bounded by ctx,
// not by go-redis' 3s read timeout, so a port held by something else
// fails fast.
func Version(ctx context.Context, addr string) (string, error) {
	opt, err := redis.ParseURL(addr)
	if err != nil {
		return "", err
	}
	opt.DisableIdentity, opt.MaxRetries, opt.ContextTimeoutEnabled = true, -1, true
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", nil
}

// ReadCache reads the cache's figures from Redis INFO into smp; a nil
// client (a target without Redis) reads nothing.
func (c *Client) ReadCache(ctx context.Context, smp *observe.Sample) error {
	if c == nil {
		return nil
	}
	info, err := c.Info(ctx, "server", "stats", "clients").Result()
	if err != nil {
		return fmt.Errorf("sample redis: %w", err)
	}
	fields := parseInfo(info)
	for _, f := range []string{"keyspace_hits", "keyspace_misses", "expired_keys", "total_connections_received", "connected_clients", "evicted_keys"} {
		if _, ok := fields[f]; !ok { // never read a missing field as zero
			return fmt.Errorf("sample redis: INFO without %s", f)
		}
	}
	smp.Hits = fields["keyspace_hits"]
	smp.Misses = fields["keyspace_misses"]
	smp.Expired = fields["expired_keys"]
	smp.ConnectionsReceived = fields["total_connections_received"]
	smp.Clients = fields["connected_clients"]
	smp.Evictions = fields["evicted_keys"]
	smp.CacheInstance = infoString(info, "run_id")
	if smp.CacheInstance == "" {
		return fmt.Errorf("sample redis: INFO without run_id")
	}
	return nil
}

// Depth is how many of the stream's entries the group has not
// acknowledged: none when the stream or the group is not there yet (or
// the client is nil). XINFO GROUPS of a missing key is an error Redis
// tells only in words, so the stream's existence is asked with it, in one
// transaction, instead.
func (c *Client) Depth(ctx context.Context, q observe.Queue) (int64, error) {
	if c == nil {
		return 0, nil
	}
	var exists *redis.IntCmd
	var info *redis.XInfoGroupsCmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		exists, info = p.Exists(ctx, q.Stream), p.XInfoGroups(ctx, q.Stream)
		return nil
	})
	if exists.Err() == nil && exists.Val() == 0 {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sample redis: XINFO GROUPS %s: %w", q.Stream, err)
	}
	for _, g := range info.Val() {
		if g.Name == q.Group {
			return max(g.Lag, 0) + g.Pending, nil
		}
	}
	return 0, nil
}

// parseInfo reads the integer fields of a Redis INFO reply.
func parseInfo(info string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

// infoString reads a text field of a Redis INFO reply.
func infoString(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}
