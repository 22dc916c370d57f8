package store

import (
	"context"
	"fmt"
	"strconv"
	"syscall"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/stores/redis"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Redis is the default cache, and runs beside every other: the write
// queue's stream. redis-server, nothing persisted.
type Redis struct{}

var (
	_ Store   = Redis{}
	_ Flusher = Redis{}
)

func (Redis) Name() string                   { return herd.Redis }
func (Redis) Title() string                  { return "Redis" }
func (Redis) Role() Role                     { return Cache }
func (Redis) Addr(a *Addrs) *string          { return &a.Redis }
func (Redis) Flags(replica.Options) []string { return nil } // --redis: every replica has one, the write queue's

// Replica gives the replicas Redis: their cache, or beside another the
// write queue's stream.
func (Redis) Replica(o *replica.Options, proxied string) { o.RedisAddr = proxied }

// Find finds redis-server.
func (Redis) Find() (Programs, error) { return onPath("redis-server", "redis-server", "redis") }

// Start runs redis-server on port with nothing persisted and waits until
// it answers INFO.
func (r Redis) Start(ctx context.Context, h Host, bins Programs, port int) (string, string, error) {
	dir, err := h.DataDir(herd.Redis, 0o755, nil)
	if err != nil {
		return "", "", err
	}
	addr := "redis://127.0.0.1:" + strconv.Itoa(port)
	var version string
	_, err = h.Spawn(ctx, Process{Name: herd.Redis, Stop: syscall.SIGTERM,
		Argv: []string{bins["redis-server"], "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--logfile", ""},
		Ready: func(ctx context.Context) (err error) {
			version, err = r.Version(ctx, addr)
			return err
		}})
	return addr, version, err
}

// Version reads redis_version from INFO, each probe bounded by ctx.
func (Redis) Version(ctx context.Context, addr string) (string, error) {
	return redis.Version(ctx, addr)
}

func (Redis) Compose() Compose {
	return Compose{Port: 6379, Published: func(hp string) string { return "redis://" + hp }}
}

// Describe makes Redis the items' cache: their keys, the invalidation
// channel, and the triggers that act on them there.
func (Redis) Describe(d *Description, _ map[string]string) {
	d.RedisKey, d.Pattern, d.Channel = "item:{key}", api.ItemKeyPattern, api.InvalidateChannel
	d.Caps.Redis, d.Caps.RedisKeys, d.Caps.Pattern, d.Caps.Channel, d.Caps.Pause = true, true, true, true, true
	d.Proxies[Cache.Dependency()] = herd.Redis
}

// Open opens the target's Redis client.
func (Redis) Open(ctx context.Context, h *Handles, addr string) (err error) {
	h.Redis, err = redis.OpenURL(ctx, addr)
	return err
}

// Flush empties it: the items and the write queue.
func (Redis) Flush(ctx context.Context, h *Handles, _ string) error {
	if err := h.Redis.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("flush cache: %w", err)
	}
	return nil
}
