package observe

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Memcached reads a Memcached server's `stats` on one connection of its
// own, kept open between reads, so that observing it adds one connection
// to total_connections and curr_connections, not one per read. It is safe
// for concurrent use; Close ends its connection.
type Memcached struct {
	Address string        // host:port
	Timeout time.Duration // one read's; 0: 2 s

	mu   sync.Mutex
	conn net.Conn
	rw   *bufio.ReadWriter
}

// memcachedFields are the stats a sample reads; a reply without one of
// them is an error, never a zero.
var memcachedFields = []string{"get_hits", "get_misses", "evictions", "curr_connections", "total_connections", "pid", "time", "uptime"}

// Stats reads `stats`: every STAT line's name and value.
func (m *Memcached) Stats(ctx context.Context) (map[string]string, error) {
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

func (m *Memcached) stats() (map[string]string, error) {
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

func (m *Memcached) timeout() time.Duration {
	if m.Timeout > 0 {
		return m.Timeout
	}
	return 2 * time.Second
}

// read fills the sample's cache figures: Hits and Misses (get_hits,
// get_misses), Evictions, Clients (curr_connections, herdbench's one
// included), ConnectionsReceived (total_connections), and CacheInstance
// (the pid and the start, time - uptime, which stays the same until the
// server restarts). Memcached counts no expirations: Expired stays 0.
func (m *Memcached) read(ctx context.Context, smp *Sample) error {
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

// Close ends the connection.
func (m *Memcached) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn != nil {
		m.conn.Close()
		m.conn, m.rw = nil, nil
	}
}
