// Package memcached is herdbench's Memcached (see package stores): the
// client a target holds, its counters (`stats`, a missing one an error)
// and what triggers do to its items (Cache: the hot keys' items, the
// whole instance only when the target allows it).
package memcached

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/triggers"
)

// Client is a target's Memcached, as herdbench holds it: its items,
// through gomemcache, for the triggers (Open's; nil in a Client made of
// its Address alone), and its `stats`, read on one connection of its own,
// kept open between reads, so that observing it adds one connection to
// total_connections and curr_connections, not one per read. It is safe
// for concurrent use; Close ends its connections.
type Client struct {
	Address string        // host:port
	Timeout time.Duration // one read's; 0: 2 s

	items *memcache.Client
	mu    sync.Mutex
	conn  net.Conn
	rw    *bufio.ReadWriter
}

var _ observe.Cache = (*Client)(nil)

// Open opens the Memcached at addr: a client for the triggers and a stats
// reader, and checks it answers.
func Open(ctx context.Context, addr string) (*Client, error) {
	c := &Client{Address: addr, items: memcache.New(addr)}
	c.items.Timeout = 5 * time.Second
	_, err := c.Stats(ctx)
	if err == nil {
		err = c.items.Ping()
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("memcached %s: %w", addr, err)
	}
	return c, nil
}

// memcachedFields are the stats a sample reads; a reply without one of
// them is an error, never a zero.
var memcachedFields = append([]string{"get_hits", "get_misses", "evictions", "curr_connections", "total_connections", "pid", "time", "uptime"}, memcachedOps...)

// memcachedOps are the stats that count the commands Memcached served;
// `stats` itself counts in none of them.
var memcachedOps = []string{"cmd_get", "cmd_set", "cmd_touch", "delete_hits", "delete_misses", "incr_hits", "incr_misses",
	"decr_hits", "decr_misses", "cas_hits", "cas_misses", "cas_badval"}

// Stats reads `stats`: every STAT line's name and value.
func (m *Client) Stats(ctx context.Context) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn == nil {
		d := net.Dialer{Timeout: m.timeout()}
		c, err := d.DialContext(ctx, "tcp", m.Address)
		if err != nil {
			return nil, fmt.Errorf("memcached %s: %w", m.Address, err)
		}
		m.conn, m.rw = c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
	}
	deadline := time.Now().Add(m.timeout())
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = m.conn.SetDeadline(deadline)
	stats, err := m.stats()
	if err != nil { // the next read dials again
		m.conn.Close()
		m.conn, m.rw = nil, nil
		return nil, fmt.Errorf("memcached %s: stats: %w", m.Address, err)
	}
	return stats, nil
}

func (m *Client) stats() (map[string]string, error) {
	if _, err := m.rw.WriteString("stats\r\n"); err != nil {
		return nil, err
	}
	if err := m.rw.Flush(); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for {
		line, err := m.rw.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return out, nil
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "STAT" {
			return nil, fmt.Errorf("unexpected reply %q", line)
		}
		out[f[1]] = f[2]
	}
}

func (m *Client) timeout() time.Duration {
	if m.Timeout > 0 {
		return m.Timeout
	}
	return 2 * time.Second
}

// ReadCache fills the sample's cache figures: Hits and Misses (get_hits,
// get_misses), Evictions, Clients (curr_connections, herdbench's one
// included), ConnectionsReceived (total_connections), CacheOps (the sum
// of memcachedOps) and CacheInstance
// (the pid and the start, time - uptime, which stays the same until the
// server restarts). Memcached counts no expirations: Expired stays 0.
// A nil client (a target without Memcached) reads nothing.
func (m *Client) ReadCache(ctx context.Context, smp *observe.Sample) error {
	if m == nil {
		return nil
	}
	st, err := m.Stats(ctx)
	if err != nil {
		return fmt.Errorf("sample %w", err)
	}
	n := map[string]int64{}
	for _, f := range memcachedFields {
		v, err := strconv.ParseInt(st[f], 10, 64)
		if err != nil {
			return fmt.Errorf("sample memcached: stats %s = %q: not a number", f, st[f])
		}
		n[f] = v
	}
	smp.Hits, smp.Misses, smp.Evictions = n["get_hits"], n["get_misses"], n["evictions"]
	smp.Clients, smp.ConnectionsReceived = n["curr_connections"], n["total_connections"]
	for _, f := range memcachedOps {
		smp.CacheOps += n[f]
	}
	smp.CacheInstance = fmt.Sprintf("memcached pid %d started %d", n["pid"], n["time"]-n["uptime"])
	return nil
}

// Close ends the connections.
func (m *Client) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items != nil {
		_ = m.items.Close()
		m.items = nil
	}
	if m.conn != nil {
		m.conn.Close()
		m.conn, m.rw = nil, nil
	}
}

// Version asks the memcached at addr its version, bounded by ctx.
func Version(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("version\r\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION ")
	if !ok {
		return "", fmt.Errorf("memcached answered version with %q", strings.TrimSpace(line))
	}
	return v, nil
}

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
	return triggers.Touched{Keys: len(hot), Removed: int64(*d.Found), Memcached: &d}, err
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

// Flush empties the whole instance (flush_all), when the target allows
// it. The detail has the server's own count of its items (stats
// curr_items) just before the flush_all and after it; KeysFlushed is how
// far the count fell. Memcached reclaims the flushed items in the
// background, so the count after is the lowest read every 10 ms over
// reclaimWait after the flush_all's answer (reclaimed).
func (m *Cache) Flush(ctx context.Context, _ triggers.Env) (triggers.Touched, error) {
	if !m.AllowFlushAll {
		return triggers.Touched{Memcached: &triggers.MemcachedDetail{}}, errFlush
	}
	before, err := m.Client.currItems(ctx)
	if err != nil {
		return triggers.Touched{Memcached: &triggers.MemcachedDetail{}}, err
	}
	start := time.Now()
	err = m.Client.items.FlushAll()
	d := triggers.MemcachedDetail{Command: "flush_all", Sent: 1, TookMS: time.Since(start).Milliseconds(), ItemsBefore: &before}
	t := triggers.Touched{Memcached: &d, Emptied: time.Now()}
	if err != nil {
		return t, fmt.Errorf("memcached flush_all: %w", err)
	}
	after, err := m.Client.reclaimed(ctx, before)
	if err != nil {
		return t, err
	}
	d.ItemsAfter, t.Removed = &after, max(before-after, 0)
	return t, nil
}

// reclaimWait is how long Flush reads the item count after flush_all.
const reclaimWait = time.Second

// reclaimed is the lowest count of items read every 10 ms from now for
// reclaimWait, or until one reads 0, starting at before: Memcached's
// background reclaims the flushed items within about a second (its LRU
// maintainer sleeps at most that long), while a service's gets unlink a
// few at a time and its sets add new ones, so no earlier read tells the
// reclaim is over.
func (m *Client) reclaimed(ctx context.Context, before int64) (int64, error) {
	low := before
	for deadline := time.Now().Add(reclaimWait); low > 0 && time.Now().Before(deadline); {
		n, err := m.currItems(ctx)
		if err != nil {
			return 0, err
		}
		low = min(low, n)
		time.Sleep(10 * time.Millisecond) // polling, with the deadline above
	}
	return low, nil
}

// currItems is the server's count of the items it holds (stats curr_items).
func (m *Client) currItems(ctx context.Context) (int64, error) {
	st, err := m.Stats(ctx)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(st["curr_items"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memcached %s: stats curr_items = %q: not a number", m.Address, st["curr_items"])
	}
	return n, nil
}

// each sends command for each hot key's item, one after another; a key
// the cache did not hold is not an error.
func (m *Cache) each(ctx context.Context, command string, hot []string, do func(item string) error) (triggers.MemcachedDetail, error) {
	found := 0
	d := triggers.MemcachedDetail{Command: command, Found: &found}
	start := time.Now()
	for _, item := range m.Items(hot) {
		if err := ctx.Err(); err != nil {
			return d, err
		}
		d.Sent++
		switch err := do(item); {
		case err == nil:
			found++
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

// Held is how many of the hot keys' items the Memcached holds now (one
// get of them all): what a key template that names no item of the
// service's reads as 0.
func (m *Cache) Held(ctx context.Context, hot []string) (int, error) {
	if m.Client == nil || m.Client.items == nil {
		return 0, errors.New("memcached: not connected")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	got, err := m.Client.items.GetMulti(m.Items(hot))
	if err != nil {
		return 0, fmt.Errorf("memcached get of %d hot keys' items: %w", len(hot), err)
	}
	return len(got), nil
}
