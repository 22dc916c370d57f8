package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/stores/memcached"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Memcached is the items' cache with testbed up --cache memcached; Redis
// runs beside it for the write queue. memcached with nothing but its
// memory (64 MB, no UDP).
type Memcached struct{}

var (
	_ Store   = Memcached{}
	_ Flusher = Memcached{}
)

func (Memcached) Name() string          { return herd.Memcached }
func (Memcached) Title() string         { return "Memcached" }
func (Memcached) Role() Role            { return Cache }
func (Memcached) Addr(a *Addrs) *string { return &a.Memcached }

func (Memcached) Replica(o *replica.Options, proxied string) { o.MemcachedAddr = proxied }

func (Memcached) Flags(o replica.Options) []string {
	if o.MemcachedAddr == "" {
		return nil
	}
	return []string{"--memcached", o.MemcachedAddr}
}

// Find finds memcached.
func (Memcached) Find() (Programs, error) { return onPath("memcached", "memcached", "memcached") }

// Start runs memcached on port, on loopback only, and waits until it
// answers `version`. As root, memcached must be told whom to run as:
// root, as the rest of the testbed's own servers do.
func (m Memcached) Start(ctx context.Context, h Host, bins Programs, port int) (string, string, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	argv := []string{bins["memcached"], "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "64"}
	if os.Getuid() == 0 {
		argv = append(argv, "-u", "root")
	}
	var version string
	_, err := h.Spawn(ctx, Process{Name: herd.Memcached, Stop: syscall.SIGTERM, Argv: argv,
		Ready: func(ctx context.Context) (err error) {
			version, err = m.Version(ctx, addr)
			return err
		}})
	return addr, version, err
}

// Version asks the memcached at addr its version, bounded by ctx.
func (Memcached) Version(ctx context.Context, addr string) (string, error) {
	return memcached.Version(ctx, addr)
}

// Compose: the memcached profile's service; the replicas read it from
// HERDBENCH_CACHE and HERDBENCH_MEMCACHED.
func (m Memcached) Compose() Compose {
	c := Compose{Port: 11211, Profile: herd.Memcached, Published: func(hp string) string { return hp }}
	c.Env = []string{"HERDBENCH_CACHE=" + herd.Memcached, "HERDBENCH_MEMCACHED=" + c.Proxy()}
	return c
}

// Describe makes Memcached the items' cache: the triggers touch the items
// there, not in Redis, which has no items and no pub/sub to offer; and the
// cache a fault breaks is the items', as in a target file (Redis, kept for
// the write queue, is out of the faults' reach).
func (Memcached) Describe(d *Description, proxies map[string]string) {
	d.OwnedItems = "item:{key}"
	d.Caps.Memcached, d.Caps.MemcachedKeys, d.Caps.FlushAll = true, true, true
	d.Proxies[Cache.Dependency()] = herd.Redis
	if _, ok := proxies[herd.Memcached]; ok {
		d.Proxies[Cache.Dependency()] = herd.Memcached
	}
}

// Open opens the target's Memcached client and stats reader.
func (Memcached) Open(ctx context.Context, h *Handles, addr string) error {
	return h.OpenMemcached(ctx, addr)
}

// Flush empties it through a connection of its own.
func (Memcached) Flush(ctx context.Context, _ *Handles, addr string) error {
	mc, err := api.NewCache(api.CacheOptions{Kind: replica.CacheMemcached, Addr: addr, Pool: 1, Timeout: 5 * time.Second})
	if err == nil {
		err = mc.Flush(ctx)
		_ = mc.Close()
	}
	if err != nil {
		return fmt.Errorf("flush memcached %s: %w", addr, err)
	}
	return nil
}
