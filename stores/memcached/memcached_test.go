package memcached

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// rawStats reads `stats` on conn, written out here apart from the
// observer: the source its figures must agree with.
func rawStats(t *testing.T, conn net.Conn, r *bufio.Reader) map[string]int64 {
	t.Helper()
	if _, err := conn.Write([]byte("stats\r\n")); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line = strings.TrimSpace(line); line == "END" {
			return out
		}
		if f := strings.Fields(line); len(f) == 3 {
			out[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
}

// The sample's cache figures are Memcached's stats, read on one kept
// connection: hits and misses count the gets, and observing adds one
// connection whatever the number of reads.
func TestMemcachedFiguresAreItsStats(t *testing.T) {
	addr := storetest.Memcached(t)
	ctx := context.Background()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rr := bufio.NewReader(raw)
	mc := memcache.New(addr)
	defer mc.Close()
	if err := mc.Set(&memcache.Item{Key: "item:1", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	obs := &Client{Address: addr}
	defer obs.Close()
	src := observe.Source{Memcached: obs}
	s0, err := src.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Get("item:1"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := mc.Get("item:2"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("get item:2 = %v; want a miss", err)
		}
	}
	var s1 observe.Sample
	for range 5 {
		if s1, err = src.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := rawStats(t, raw, rr)
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"Hits = get_hits", s1.Hits, st["get_hits"]},
		{"Misses = get_misses", s1.Misses, st["get_misses"]},
		{"Evictions = evictions", s1.Evictions, st["evictions"]},
		{"Clients = curr_connections", s1.Clients, st["curr_connections"]},
		{"ConnectionsReceived = total_connections", s1.ConnectionsReceived, st["total_connections"]},
		{"hits from the first sample", s1.Hits - s0.Hits, 1},
		{"misses from the first sample", s1.Misses - s0.Misses, 2},
		{"connections observing added after the first read", s1.ConnectionsReceived - s0.ConnectionsReceived, 0},
		{"CacheOps = cmd_get + cmd_set + ...", s1.CacheOps, st["cmd_get"] + st["cmd_set"] + st["cmd_touch"] + st["delete_hits"] + st["delete_misses"] +
			st["incr_hits"] + st["incr_misses"] + st["decr_hits"] + st["decr_misses"] + st["cas_hits"] + st["cas_misses"] + st["cas_badval"]},
		{"commands from the first sample: three gets, the five reads none", s1.CacheOps - s0.CacheOps, 3},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d; want %d", c.name, c.got, c.want)
		}
	}
	if observe.CacheRestarted(s0, s1) || s1.CacheInstance == "" {
		t.Errorf("instance %q then %q; want one, unchanged", s0.CacheInstance, s1.CacheInstance)
	}
}

// A Memcached that went away fails the read; the next read, once it is
// back, dials again.
func TestMemcachedReadFailsWhenItIsGone(t *testing.T) {
	obs := &Client{Address: storetest.Memcached(t)}
	defer obs.Close()
	if _, err := (observe.Source{Memcached: obs}).Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs.Address = "127.0.0.1:1" // nothing listens there
	obs.Close()
	if _, err := (observe.Source{Memcached: obs}).Read(context.Background()); err == nil {
		t.Error("a read from no server succeeded")
	}
}
