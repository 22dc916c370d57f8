package local

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// startRedis runs redis-server on port with nothing persisted and waits until
// it answers PING. It returns the server's version.
func (tb *Testbed) startRedis(ctx context.Context, port int) (string, error) {
	dir := filepath.Join(tb.cfg.StateDir, "redis")
	if err := mkdirEmpty(dir, 0o755); err != nil {
		return "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p, err := tb.spawn(ctx, "redis", syscall.SIGTERM, nil,
		tb.bins.redis, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--logfile", "")
	if err != nil {
		return "", err
	}
	var version string
	p.ready = func(ctx context.Context) error {
		// ContextTimeoutEnabled: each probe is bounded by poll's context, not
		// by go-redis' 3s read timeout, so a port held by something else
		// fails fast.
		rdb := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1, ContextTimeoutEnabled: true})
		defer rdb.Close()
		info, err := rdb.Info(ctx, "server").Result()
		if err != nil {
			return err
		}
		version = infoField(info, "redis_version")
		return nil
	}
	err = tb.waitReady(ctx, p, p.ready)
	if err != nil {
		return "", err
	}
	tb.status.Redis = "redis://" + addr
	return version, nil
}

// infoField reads one field of a Redis INFO reply.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}
