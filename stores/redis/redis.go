// Package redis is herdbench's Redis (see package stores): the client a
// target holds, its counters (INFO, a stream's depth) and what triggers
// do to it (Cache: only the keys its pattern matches, unless the target
// grants FLUSHDB). A missing INFO field fails a read, never reads as 0.
package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/triggers"
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
	return infoString(info, "redis_version"), err
}

// ReadCache reads the cache's figures from Redis INFO into smp; a nil
// client (a target without Redis) reads nothing.
func (c *Client) ReadCache(ctx context.Context, smp *observe.Sample) error {
	if c == nil {
		return nil
	}
	info, err := c.Info(ctx, "server", "stats", "clients", "commandstats").Result()
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
	smp.CacheOps = commandsServed(info)
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

// ownCommands are those herdbench's reads send (a sample's INFO and
// XINFO in a MULTI, a connection's HELLO, CLIENT SETINFO, SELECT, AUTH,
// a PING), which CacheOps leaves out: what is left is the service's.
var ownCommands = []string{"info", "xinfo", "multi", "exec", "hello", "client", "select", "auth", "ping"}

// commandsServed sums the calls of INFO commandstats' commands
// (cmdstat_get:calls=5,usec=...; a subcommand as cmdstat_client|setinfo)
// but for ownCommands.
func commandsServed(info string) int64 {
	var n int64
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		cmd, _, _ := strings.Cut(name, "|")
		if !ok || !strings.HasPrefix(strings.TrimSpace(line), "cmdstat_") || slices.Contains(ownCommands, cmd) {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		if v, err := strconv.ParseInt(calls, 10, 64); err == nil {
			n += v
		}
	}
	return n
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

// Cache is a Redis as triggers touch it: the keys of the hot keys that
// its pattern lets them touch (expire unlinks them, ttl makes them expire
// at T), for flush every key of the pattern, or the whole database when
// the target grants it (FlushDB: the testbed's); and what only Redis does: a broadcast
// invalidation on the service's channel (notify), a pause of every client
// (outage).
type Cache struct {
	Client  *Client
	Key     func(key string) string // the Redis key of a request's key; nil when the target declares none
	Pattern string                  // the only keys a trigger may touch (a Redis glob)
	FlushDB bool                    // flush may empty the whole database (Caps.FlushDB), not only the pattern's keys
	Channel string                  // where the service listens for broadcast invalidations; "": none
}

// errNoRedis fails an action on a Redis the target declares and never
// connected (a dry run's target, or one whose connection failed).
var errNoRedis = errors.New("the target's Redis is not connected")

var (
	_ triggers.Cache       = (*Cache)(nil)
	_ triggers.Expirer     = (*Cache)(nil)
	_ triggers.Broadcaster = (*Cache)(nil)
	_ triggers.Pauser      = (*Cache)(nil)
)

// HotKeys are the Redis keys of the hot keys that the pattern lets a
// trigger touch, hottest first.
func (r *Cache) HotKeys(hot []string) []string {
	var keys []string
	for _, k := range hot {
		if rk := r.Key(k); triggers.MatchPattern(r.Pattern, rk) {
			keys = append(keys, rk)
		}
	}
	return keys
}

// Keyed says whether the target names the Redis key of a request's key.
func (r *Cache) Keyed() bool { return r.Key != nil }

func (r *Cache) DescribeDelete(hot []string) string {
	keys := r.HotKeys(hot)
	return fmt.Sprintf("UNLINK %d Redis keys (the hot keys matching %s): %s", len(keys), r.Pattern, triggers.List(keys))
}

// Delete unlinks the hot keys' fresh copies (stale copies stay).
func (r *Cache) Delete(ctx context.Context, hot []string) (triggers.Touched, error) {
	keys := r.HotKeys(hot)
	if len(keys) == 0 {
		return triggers.Touched{}, nil
	}
	if r.Client == nil {
		return triggers.Touched{}, errNoRedis
	}
	n, err := r.Client.Unlink(ctx, keys...).Result()
	if err != nil {
		return triggers.Touched{}, fmt.Errorf("unlink %d hot keys: %w", len(keys), err)
	}
	return triggers.Touched{Keys: len(keys), Removed: n}, nil
}

func (r *Cache) DescribeExpireAt(hot []string) string {
	keys := r.HotKeys(hot)
	return fmt.Sprintf("PEXPIREAT T on %d Redis keys (the hot keys matching %s) before the load: %s", len(keys), r.Pattern, triggers.List(keys))
}

// ExpireAt makes the hot keys expire exactly at (PEXPIREAT).
func (r *Cache) ExpireAt(ctx context.Context, hot []string, at time.Time) (triggers.Touched, error) {
	keys := r.HotKeys(hot)
	if r.Client == nil {
		return triggers.Touched{}, errNoRedis
	}
	cmds, err := r.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.PExpireAt(ctx, k, at)
		}
		return nil
	})
	found := 0
	for _, c := range cmds {
		if b, ok := c.(*redis.BoolCmd); ok && b.Val() {
			found++
		}
	}
	return triggers.Touched{Keys: len(keys), Found: &found}, err
}

// Flushes says whether flush may touch it: all of it when the target
// grants it, else the keys of its pattern.
func (r *Cache) Flushes() bool { return r.FlushDB || r.Pattern != "" }

func (r *Cache) DescribeFlush() string {
	if r.FlushDB {
		return "FLUSHDB on the testbed's Redis"
	}
	return fmt.Sprintf("SCAN MATCH %s and UNLINK every key it finds (only keys matching the pattern)", r.Pattern)
}

// Flush empties the database (FLUSHDB) when the target grants it, and
// otherwise unlinks every key matching the pattern.
func (r *Cache) Flush(ctx context.Context, _ triggers.Env) (triggers.Touched, error) {
	if r.Client == nil {
		return triggers.Touched{}, errNoRedis
	}
	if r.FlushDB {
		n, err := r.Client.DBSize(ctx).Result()
		if err != nil {
			return triggers.Touched{}, fmt.Errorf("count keys: %w", err)
		}
		if err := r.Client.FlushDB(ctx).Err(); err != nil {
			return triggers.Touched{}, err
		}
		return triggers.Touched{Removed: n}, nil
	}
	if r.Pattern == "" {
		return triggers.Touched{}, errors.New("the target declares no pattern of keys it may touch")
	}
	n, err := r.unlinkMatching(ctx)
	if err != nil {
		return triggers.Touched{}, fmt.Errorf("the keys matching %s: %w", r.Pattern, err)
	}
	return triggers.Touched{Removed: n, Pattern: r.Pattern}, nil
}

// unlinkMatching unlinks every key matching the pattern, a thousand at a
// time, and returns how many it removed.
func (r *Cache) unlinkMatching(ctx context.Context) (int64, error) {
	var n int64
	iter := r.Client.Scan(ctx, 0, r.Pattern, 1000).Iterator()
	var batch []string
	unlink := func() error {
		if len(batch) == 0 {
			return nil
		}
		m, err := r.Client.Unlink(ctx, batch...).Result()
		n += m
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if k := iter.Val(); triggers.MatchPattern(r.Pattern, k) { // SCAN's match, checked again
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

// Broadcasts says whether the target names the channel the service
// listens on for invalidations.
func (r *Cache) Broadcasts() bool { return r.Channel != "" }

func (r *Cache) DescribeBroadcast(hot []string) string {
	return fmt.Sprintf("PUBLISH the %d hot keys on channel %s: %s", len(hot), r.Channel, triggers.List(hot))
}

// Broadcast publishes the hot keys on the channel, and returns how many
// subscribers got them.
func (r *Cache) Broadcast(ctx context.Context, hot []string) (int64, error) {
	if r.Client == nil {
		return 0, errNoRedis
	}
	n, err := r.Client.Publish(ctx, r.Channel, strings.Join(hot, ",")).Result()
	if err != nil {
		return 0, fmt.Errorf("publish: %w", err)
	}
	return n, nil
}

func (r *Cache) DescribePause(d time.Duration) string {
	return fmt.Sprintf("CLIENT PAUSE %d ALL on the Redis (every client of it waits) for %s, then CLIENT UNPAUSE", d.Milliseconds(), d)
}

// Pause makes Redis stop answering every client for d (CLIENT PAUSE ALL),
// which Redis ends by itself.
func (r *Cache) Pause(ctx context.Context, d time.Duration) error {
	if r.Client == nil {
		return errNoRedis
	}
	if err := r.Client.Do(ctx, "CLIENT", "PAUSE", d.Milliseconds(), "ALL").Err(); err != nil {
		return fmt.Errorf("pause redis: %w", err)
	}
	return nil
}

// Unpause ends a pause early (CLIENT UNPAUSE).
func (r *Cache) Unpause(ctx context.Context) error {
	if r.Client == nil {
		return errNoRedis
	}
	if err := r.Client.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		return fmt.Errorf("unpause redis: %w", err)
	}
	return nil
}

// HoldsKeys says whether the database holds any key (DBSIZE): an empty one
// after a warm-up tells nothing of a key name (the service's entries may
// all have expired), one that holds keys but none of the hot keys' does.
func (r *Cache) HoldsKeys(ctx context.Context) (bool, error) {
	if r.Client == nil {
		return false, errNoRedis
	}
	n, err := r.Client.DBSize(ctx).Result()
	if err != nil {
		return false, fmt.Errorf("dbsize: %w", err)
	}
	return n > 0, nil
}

// Held is how many of the hot keys' Redis keys exist now (EXISTS), and
// whether any key matches the pattern (SCAN): what a key or pattern that
// names none of the service's reads as 0 and false. A SCAN that found
// none in its first five rounds (about 5,000 keys looked at) of a larger
// database says matched: it does not know.
func (r *Cache) Held(ctx context.Context, hot []string) (n int64, matched bool, err error) {
	if r.Client == nil {
		return 0, false, errNoRedis
	}
	if r.Key != nil && len(hot) > 0 {
		keys := make([]string, len(hot))
		for i, k := range hot {
			keys[i] = r.Key(k)
		}
		if n, err = r.Client.Exists(ctx, keys...).Result(); err != nil {
			return 0, false, fmt.Errorf("exists of %d hot keys: %w", len(keys), err)
		}
	}
	if r.Pattern == "" {
		return n, false, nil
	}
	cursor := uint64(0)
	for range 5 { // a pattern of the service's matches among the first few thousand keys scanned, or its keys are few
		keys, next, err := r.Client.Scan(ctx, cursor, r.Pattern, 1000).Result()
		if err != nil {
			return n, false, fmt.Errorf("scan %s: %w", r.Pattern, err)
		}
		if len(keys) > 0 || next == 0 {
			return n, len(keys) > 0, nil
		}
		cursor = next
	}
	return n, true, nil
}
