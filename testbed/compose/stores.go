package compose

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// Proxies are the toxiproxy proxies the replicas use, inside the compose
// network (testbed/compose/toxiproxy.json): those of the stores every
// compose testbed runs (a store's own profile adds its own).
var Proxies = defaultProxies()

func defaultProxies() map[string]string {
	out := map[string]string{}
	for _, k := range store.Kinds() {
		if k.Compose().Profile == "" {
			out[k.Name()] = k.Compose().Proxy()
		}
	}
	return out
}

// storeProfiles are the profiles of the stores cfg asks for, and the
// environment that points the replicas at them; none for the compose
// file's defaults.
func (cfg Config) storeProfiles() (profiles, env []string) {
	for _, k := range store.Kinds() {
		if c := k.Compose(); c.Profile != "" && k.Name() == cfg.kind(k.Role()) {
			profiles, env = append(profiles, c.Profile), append(env, c.Env...)
		}
	}
	return profiles, env
}

// kind is the store cfg asks for in role.
func (cfg Config) kind(role store.Role) string {
	if role == store.DB {
		return cfg.DB
	}
	return cfg.Cache
}

// storesOf is the stores a project up with profiles runs: in each role,
// the store its profile runs, else the role's default. A default
// another store replaces still runs, idle (the replicas and toxiproxy
// wait for it), and the status names it nowhere, so no figure, fault or
// restart reaches it by its role.
func storesOf(profiles []string) store.Set {
	var cfg Config
	for _, k := range store.Kinds() {
		if p := k.Compose().Profile; p != "" && slices.Contains(profiles, p) {
			if k.Role() == store.DB {
				cfg.DB = k.Name()
			} else {
				cfg.Cache = k.Name()
			}
		}
	}
	return store.MustFor(replica.Options{Cache: cfg.Cache, DB: cfg.DB})
}

// storesStatus fills s with the stores the project runs: each one's
// address on its published port (the harness reads and flushes it there,
// directly), its proxy and its version. addr is the published host:port
// of a service's port.
func storesStatus(ctx context.Context, s *testbed.Status, set store.Set, addr func(service string, port int) string) {
	s.Proxies = maps.Clone(s.Proxies)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range set.Running() {
		c := k.Compose()
		a := c.Published(addr(k.Name(), c.Port))
		*k.Addr(&s.Addrs), s.Proxies[k.Name()] = a, c.Proxy()
		wg.Go(func() { // a store that does not answer is left out of the versions
			if v, err := k.Version(ctx, a); err == nil && v != "" {
				mu.Lock()
				s.Versions[k.Name()] = v
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, k := range set.Replaced() {
		delete(s.Proxies, k.Name())
	}
}
