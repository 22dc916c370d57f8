package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/herd"
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

// Version reads redis_version from INFO. Each probe is bounded by ctx,
// not by go-redis' 3s read timeout, so a port held by something else
// fails fast.
func (Redis) Version(ctx context.Context, addr string) (string, error) {
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
func (Redis) Open(ctx context.Context, h *Handles, addr string) error {
	opt, err := redis.ParseURL(addr)
	if err != nil {
		return fmt.Errorf("redis url %q: %w", addr, err)
	}
	opt.DisableIdentity = true
	h.Redis = redis.NewClient(opt)
	if err := h.Redis.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis %s: %w", addr, err)
	}
	return nil
}

// Flush empties it: the items and the write queue.
func (Redis) Flush(ctx context.Context, h *Handles, _ string) error {
	if err := h.Redis.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("flush cache: %w", err)
	}
	return nil
}
