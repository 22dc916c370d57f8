// Package memcached is herdbench's Memcached: the client a target holds,
// the counters a sample reads of it (`stats`), what triggers do to its
// items (Cache: delete, touch, flush_all) and its version. It is the only
// package that imports gomemcache, the testbed's API server excepted.
//
// Guarantees: a stat a sample needs is read from the reply or the read
// fails, never a zero; a trigger touches the hot keys' items only, and
// the whole instance only when the target allows it.
package memcached

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/herdbench/herdbench/observe"
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
var memcachedFields = []string{"get_hits", "get_misses", "evictions", "curr_connections", "total_connections", "pid", "time", "uptime"}

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
// included), ConnectionsReceived (total_connections), and CacheInstance
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
