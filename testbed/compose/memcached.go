package compose

import (
	"context"
	"maps"
	"time"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
)

// MemcachedProfile is the compose profile of the memcached service, the
// replicas' item cache with Config.Cache memcached.
const MemcachedProfile = api.CacheMemcached

// MemcachedProxy is the toxiproxy proxy in front of Memcached, inside the
// compose network (testbed/compose/toxiproxy.json): the replicas' address
// of it, named "memcached" in the status' proxies as the local provider
// names its own.
const MemcachedProxy = "toxiproxy:11211"

// CacheEnv is the environment the compose file reads the replicas' cache
// from (HERDBENCH_CACHE, HERDBENCH_MEMCACHED): none for Redis, the
// compose file's default.
func CacheEnv(cache string) []string {
	if cache != api.CacheMemcached {
		return nil
	}
	return []string{"HERDBENCH_CACHE=" + api.CacheMemcached, "HERDBENCH_MEMCACHED=" + MemcachedProxy}
}

// memcachedStatus fills s with the memcached service: its published
// address (the harness flushes it and reads its stats there, directly),
// its proxy and its version. addr is the published host:port of a
// service's port.
func memcachedStatus(ctx context.Context, s *testbed.Status, addr func(service string, port int) string) {
	s.Memcached = addr(api.CacheMemcached, 11211)
	s.Proxies = maps.Clone(s.Proxies)
	s.Proxies[api.CacheMemcached] = MemcachedProxy
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	mc := &observe.Memcached{Address: s.Memcached}
	defer mc.Close()
	if stats, err := mc.Stats(ctx); err == nil && stats["version"] != "" {
		s.Versions[api.CacheMemcached] = stats["version"]
	}
}
