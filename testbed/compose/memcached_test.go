package compose

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// The docker provider takes --cache memcached: it is no problem, and up
// starts the memcached profile with the replicas' cache in the
// environment compose reads, then reports Memcached's published address
// and its proxy as the local provider does.
func TestUpWithMemcachedUsesTheProfile(t *testing.T) {
	mc := replica.DefaultOptions
	mc.Cache = replica.CacheMemcached
	if bad := (Provider{}).Problems(testbed.Options{Set: []string{"cache"}, Replica: mc}); len(bad) > 0 {
		t.Errorf("Problems(--cache memcached) = %v; want none", bad)
	}
	if bad := (Provider{}).Problems(testbed.Options{Set: []string{"cache", "replicas"}, Replica: mc}); len(bad) != 1 || bad[0].Field != "replicas" {
		t.Errorf("Problems(--cache memcached --replicas) = %v; want --replicas alone refused", bad)
	}

	all := append(slices.Clone(core), "memcached")
	f := newFakeDocker(t, all)
	dir := t.TempDir()
	st, err := Up(context.Background(), Config{StateDir: dir, File: f.file, Cache: replica.CacheMemcached})
	if err != nil {
		t.Fatal(err)
	}
	env := "HERDBENCH_CACHE=memcached HERDBENCH_MEMCACHED=" + (store.Memcached{}).Compose().Proxy() + " "
	want := env + "docker compose -f FILE -p herdbench --profile memcached up -d --build --remove-orphans"
	if calls := f.calls(t); !slices.Contains(calls, want) {
		t.Errorf("calls =\n%s\nwant among them\n%s", strings.Join(calls, "\n"), want)
	}
	if st.Memcached != "127.0.0.1:21211" || st.Proxies[replica.CacheMemcached] != (store.Memcached{}).Compose().Proxy() || st.Proxies["redis"] != Proxies["redis"] ||
		st.Redis != "redis://127.0.0.1:16379" || Proxies[replica.CacheMemcached] != "" {
		t.Errorf("status memcached %q, proxies %v, redis %q; want 127.0.0.1:21211, its proxy beside redis and postgres (the package's map untouched), and Redis for the queue",
			st.Memcached, st.Proxies, st.Redis)
	}
	// down runs in the same profile and environment, so it removes Memcached too
	f.reset(t)
	if err := Down(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if calls, want := f.calls(t), env+"docker compose -f FILE -p herdbench --profile memcached down -v --remove-orphans"; !slices.Equal(calls, []string{want}) {
		t.Errorf("Down calls = %q; want %q", calls, want)
	}
}

// With the environment up gives the memcached profile, the replicas cache
// in Memcached through its toxiproxy proxy, and keep Redis beside it for
// the write queue.
func TestReplicasCacheInMemcachedWithItsProfile(t *testing.T) {
	for _, kv := range (store.Memcached{}).Compose().Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	p := load(t, (store.Memcached{}).Compose().Profile)
	for _, r := range []string{"api-1", "api-2", "api-3"} {
		flags := serveFlags(t, p, r)
		if flags["--cache"] != replica.CacheMemcached || flags["--memcached"] != (store.Memcached{}).Compose().Proxy() || flags["--redis"] != Proxies["redis"] {
			t.Errorf("%s: --cache %q, --memcached %q, --redis %q; want memcached, %s, and %s for the queue",
				r, flags["--cache"], flags["--memcached"], flags["--redis"], (store.Memcached{}).Compose().Proxy(), Proxies["redis"])
		}
	}
	if env := (store.Redis{}).Compose().Env; env != nil {
		t.Errorf("Redis' compose env = %q; want none: the compose file's default is Redis", env)
	}
}
