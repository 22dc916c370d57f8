package api

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// startServer runs a cache server program (redis-server, memcached) with
// args on a free loopback port it is given with "PORT", and returns its
// address once it accepts connections. It skips without the program, and
// fails when CI is set: a skipped test proves nothing.
func startServer(t *testing.T, program string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s is missing: %v", program, err)
		}
		t.Skipf("%s missing: %v", program, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "PORT", port)
	}
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s not ready after 10s: %v", program, addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polling a port with a deadline
	}
}

// memcachedArgs are memcached's on loopback; as root it needs -u.
func memcachedArgs() []string {
	args := []string{"-l", "127.0.0.1", "-p", "PORT", "-U", "0"}
	if os.Getuid() == 0 {
		args = append(args, "-u", "root")
	}
	return args
}

// testCaches are a client of each cache, on a real server of its own.
func testCaches(t *testing.T) map[string]Cache {
	t.Helper()
	out := map[string]Cache{}
	for kind, addr := range map[string]string{
		replica.CacheRedis:     startServer(t, "redis-server", "--port", "PORT", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
		replica.CacheMemcached: startServer(t, "memcached", memcachedArgs()...),
	} {
		c, err := NewCache(CacheOptions{Kind: kind, Addr: addr, Pool: 4, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out[kind] = c
	}
	return out
}

// TestCaches holds both caches to the Cache contract the read path and
// the loaders rely on.
func TestCaches(t *testing.T) {
	ctx := context.Background()
	for kind, c := range testCaches(t) {
		t.Run(kind, func(t *testing.T) {
			get := func(key string) string {
				t.Helper()
				b, ok, err := c.Get(ctx, key)
				if err != nil {
					t.Fatalf("Get(%q): %v", key, err)
				}
				if !ok {
					return "<absent>"
				}
				return string(b)
			}
			if got := get("item:1"); got != "<absent>" {
				t.Errorf("Get(item:1) on an empty cache = %q; want absent", got)
			}
			if err := c.Set(ctx, CacheEntry{"item:1", []byte("a"), time.Minute}, CacheEntry{"stale:item:1", []byte("b"), time.Hour}); err != nil {
				t.Fatal(err)
			}
			if a, b := get("item:1"), get("stale:item:1"); a != "a" || b != "b" {
				t.Errorf("after Set: %q, %q; want a, b", a, b)
			}

			// a claim: one Add wins; the holder's release frees it, another's does not
			if ok, err := c.Add(ctx, "lock:item:1", "t1", time.Minute); !ok || err != nil {
				t.Fatalf("first Add = %v, %v; want true", ok, err)
			}
			if ok, err := c.Add(ctx, "lock:item:1", "t2", time.Minute); ok || err != nil {
				t.Fatalf("second Add = %v, %v; want false", ok, err)
			}
			if err := c.DeleteIfEqual(ctx, "lock:item:1", "t2"); err != nil || get("lock:item:1") != "t1" {
				t.Fatalf("DeleteIfEqual with another's token: %v, lock %q; want it kept as t1", err, get("lock:item:1"))
			}
			if err := c.DeleteIfEqual(ctx, "lock:item:1", "t1"); err != nil || get("lock:item:1") != "<absent>" {
				t.Fatalf("DeleteIfEqual with the holder's token: %v, lock %q; want it gone", err, get("lock:item:1"))
			}
			if err := c.DeleteIfEqual(ctx, "lock:item:1", "t1"); err != nil {
				t.Errorf("DeleteIfEqual of nothing: %v; want no error", err)
			}

			// the lease: a set with a token the key no longer holds is refused
			claim := Claim{Key: "lease:item:2", Token: "t1", Expires: time.Now().Add(time.Minute)}
			if ok, _ := c.Add(ctx, claim.Key, claim.Token, time.Minute); !ok {
				t.Fatal("lease Add failed")
			}
			if ok, err := c.SetIfHeld(ctx, Claim{Key: claim.Key, Token: "t0"}, CacheEntry{"item:2", []byte("old"), time.Minute}); ok || err != nil || get("item:2") != "<absent>" {
				t.Errorf("SetIfHeld with a stale token = %v, %v, item %q; want refused", ok, err, get("item:2"))
			}
			if ok, err := c.SetIfHeld(ctx, claim, CacheEntry{"item:2", []byte("new"), time.Minute}, CacheEntry{"stale:item:2", []byte("new"), time.Hour}); !ok || err != nil {
				t.Errorf("SetIfHeld with the token = %v, %v; want stored", ok, err)
			}
			if a, b, l := get("item:2"), get("stale:item:2"), get(claim.Key); a != "new" || b != "new" || l != "t1" {
				t.Errorf("after the lease's set: %q, %q, lease %q; want new, new, t1 (the lease kept to its end)", a, b, l)
			}

			if err := c.Delete(ctx, "item:1", "item:404"); err != nil || get("item:1") != "<absent>" {
				t.Errorf("Delete: %v, item:1 %q; want it gone, an absent key no error", err, get("item:1"))
			}
			if err := c.Flush(ctx); err != nil || get("stale:item:1") != "<absent>" {
				t.Errorf("Flush: %v, stale:item:1 %q; want empty", err, get("stale:item:1"))
			}
			if err := c.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}

func TestMemcachedExpiry(t *testing.T) {
	for _, tc := range []struct {
		ttl  time.Duration
		want int32
	}{
		{time.Millisecond, 2}, {time.Second, 2}, {1001 * time.Millisecond, 3}, {time.Minute, 61},
		{replica.MaxMemcachedTTL, 30 * 24 * 3600}, {replica.MaxMemcachedTTL + time.Hour, 30 * 24 * 3600}, {0, 1}, {-time.Second, 1},
	} {
		if got := expiry(tc.ttl); got != tc.want {
			t.Errorf("expiry(%v) = %d; want %d", tc.ttl, got, tc.want)
		}
	}
}

// TestKeysFitMemcached: the longest key the cache uses, a lease's of the
// largest id, fits Memcached's 250 bytes.
func TestKeysFitMemcached(t *testing.T) {
	id := strconv.FormatInt(math.MaxInt64, 10)
	for _, k := range []string{ItemKey(math.MaxInt64), stalePrefix + id, lockPrefix + id, leasePrefix + id} {
		if len(k) > 30 || strings.ContainsAny(k, " \t\r\n") {
			t.Errorf("key %q: %d bytes; want at most 30 and no space (Memcached takes 250)", k, len(k))
		}
	}
}

func TestCacheProblems(t *testing.T) {
	mc := replica.DefaultOptions
	mc.Cache, mc.MemcachedAddr = replica.CacheMemcached, "127.0.0.1:11211"
	withRedis := mc
	withRedis.RedisAddr = "127.0.0.1:6379"
	set := func(c replica.Config, field, v string) replica.Config {
		k, _ := replica.KnobNamed(field)
		if err := k.Value(&c).Set(v); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		o     replica.Options
		c     replica.Config
		field string // "" for none
	}{
		{"redis takes refresh", replica.DefaultOptions, set(replica.DefaultConfig, "write_invalidate", "refresh"), ""},
		{"memcached refuses refresh", mc, set(replica.DefaultConfig, "write_invalidate", "refresh"), "write_invalidate"},
		{"memcached alone refuses queue", mc, set(replica.DefaultConfig, "write_strategy", "queue"), "write_strategy"},
		{"memcached beside a redis takes queue", withRedis, set(replica.DefaultConfig, "write_strategy", "queue"), ""},
		{"memcached refuses a ttl past 30 days", mc, set(set(replica.DefaultConfig, "stale_ttl", "1000h"), "ttl", "800h"), "ttl"},
		{"memcached takes the defaults", mc, replica.DefaultConfig, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.o.CacheProblems(tc.c)
			switch {
			case tc.field == "" && len(errs) > 0:
				t.Errorf("CacheProblems = %v; want none", errs)
			case tc.field != "" && len(errs.In(tc.field)) == 0:
				t.Errorf("CacheProblems = %v; want one on %s", errs, tc.field)
			}
		})
	}
	bad := replica.DefaultOptions
	bad.Cache = "memcache"
	if errs := bad.Problems(); len(errs.In("cache")) != 1 || !strings.Contains(errs.Error(), "redis, memcached") {
		t.Errorf("Problems of cache %q = %v; want one naming the accepted caches", bad.Cache, errs)
	}
	var _ herd.FieldErrors = bad.Problems()
}

// A replica on Memcached without a Redis: /healthz says which it uses,
// a miss with Postgres away is an error rather than a crash, and
// PUT /admin/config refuses what needs Redis with the reason.
func TestReplicaOnMemcachedAlone(t *testing.T) {
	opts := replica.DefaultOptions
	opts.Cache = replica.CacheMemcached
	opts.MemcachedAddr = startServer(t, "memcached", memcachedArgs()...)
	opts.PostgresDSN = "postgres://nobody@127.0.0.1:1/none?sslmode=disable"
	opts.DBTimeout = 300 * time.Millisecond // above the default query_cost, 200ms
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	code, body := do(t, http.MethodGet, srv.URL+"/healthz", "")
	var h admin.Health
	if err := json.Unmarshal([]byte(body), &h); err != nil || h.Memcached != "ok" || h.Redis != "unused" || code != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz = %d %s; want memcached ok, redis unused, 503 for the Postgres that is away", code, body)
	}
	if code, body := do(t, http.MethodGet, srv.URL+"/items/1", ""); code != http.StatusInternalServerError {
		t.Errorf("GET /items/1 with Postgres away = %d %s; want 500", code, body)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"write_invalidate":"refresh"}`, "write_invalidate: refresh broadcasts the written items on Redis pub/sub, which Memcached lacks"},
		{`{"write_strategy":"queue"}`, "write_strategy: queue keeps the writes in a Redis stream, and this replica on Memcached has no Redis"},
		{`{"stale_ttl":"800h"}`, "stale_ttl: 800h0m0s is too long for Memcached"},
	} {
		if code, body := do(t, http.MethodPut, srv.URL+"/admin/config", tc.body); code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("PUT /admin/config %s = %d %s; want 400 saying %q", tc.body, code, body, tc.want)
		}
	}
	if code, body := do(t, http.MethodPut, srv.URL+"/admin/config", `{"strategy":"lease","write_strategy":"coalesce"}`); code != http.StatusOK {
		t.Errorf("PUT /admin/config lease, coalesce = %d %s; want 200", code, body)
	}
}
