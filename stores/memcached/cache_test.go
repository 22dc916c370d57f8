package memcached

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/herdbench/herdbench/testbed/storetest"
	"github.com/herdbench/herdbench/triggers"
)

// memcachedEnv is a real Memcached holding item:1 to item:5 and other:1,
// with the hot keys 1, 2, 3 and 9 (which it does not hold).
func memcachedEnv(t *testing.T, allowFlush bool) (triggers.Env, *Cache, *memcache.Client) {
	t.Helper()
	addr := storetest.Memcached(t)
	mc := memcache.New(addr)
	t.Cleanup(func() { mc.Close() })
	for _, k := range []string{"item:1", "item:2", "item:3", "item:4", "item:5", "other:1"} {
		if err := mc.Set(&memcache.Item{Key: k, Value: []byte("v"), Expiration: 3600}); err != nil {
			t.Fatal(err)
		}
	}
	m := &Cache{Client: &Client{Address: addr, items: mc}, AllowFlushAll: allowFlush, Key: func(k string) string { return "item:" + k }}
	return triggers.Env{Caches: []triggers.Cache{m}, HotKeys: []string{"1", "2", "3", "9"}}, m, mc
}

// cached lists which of keys the cache holds.
func cached(t *testing.T, mc *memcache.Client, keys ...string) []string {
	t.Helper()
	items, err := mc.GetMulti(keys)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if items[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// expire deletes the hot keys' items, and only them.
func TestExpireDeletesTheHotItemsInMemcached(t *testing.T) {
	env, _, mc := memcachedEnv(t, false)
	if plan := (&triggers.Expire{}).Plan(env); !strings.Contains(plan, "delete 4 Memcached items (the hot keys): item:1, item:2, item:3, item:9") {
		t.Errorf("Plan = %q", plan)
	}
	fired, err := (&triggers.Expire{}).Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	d := fired.Detail.(*triggers.ExpireDetail)
	if d.Keys != 4 || d.KeysRemoved != 3 || d.Memcached == nil || d.Memcached.Sent != 4 || d.Memcached.Found == nil || *d.Memcached.Found != 3 || d.Memcached.Command != "delete" {
		t.Errorf("detail = %+v, memcached %+v; want 4 sent, the 3 held removed", d, d.Memcached)
	}
	if got := strings.Join(cached(t, mc, "item:1", "item:2", "item:3", "item:4", "item:5", "other:1"), " "); got != "item:4 item:5 other:1" {
		t.Errorf("left %q; want item:4 item:5 other:1", got)
	}
}

// ttl makes the hot keys' items expire at T's second, never before T;
// the others keep theirs.
func TestTTLAlignsMemcachedItemsAtT(t *testing.T) {
	env, _, mc := memcachedEnv(t, false)
	env.T = time.Now().Add(2500 * time.Millisecond)
	ttl := &triggers.TTL{}
	if err := ttl.Align(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	fired, err := ttl.Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	d := fired.Detail.(*triggers.TTLDetail)
	want := env.T.Truncate(time.Second).Add(time.Second).Unix()
	if d.Keys != 4 || d.Missing != 1 || d.Memcached == nil || d.Memcached.Found == nil || *d.Memcached.Found != 3 || d.Memcached.ExpiresAt != want {
		t.Errorf("detail = %+v, memcached %+v; want 4 keys, 3 touched to expire at %d, 1 missing", d, d.Memcached, want)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(cached(t, mc, "item:1", "item:2", "item:3")) > 0 {
		if time.Now().Before(env.T) && len(cached(t, mc, "item:1", "item:2", "item:3")) < 3 {
			t.Fatalf("a hot item expired before T")
		}
		if time.Now().After(deadline) {
			t.Fatalf("hot items %v still held 15 s after aligning them at T", cached(t, mc, "item:1", "item:2", "item:3"))
		}
		time.Sleep(50 * time.Millisecond) // polling, with the deadline above
	}
	if got := cached(t, mc, "item:4", "other:1"); len(got) != 2 {
		t.Errorf("left %v; want item:4 and other:1, untouched", got)
	}
}

// flush empties a Memcached only when the target allows it, and is
// refused before the run when it does not; its figures are memcached's own
// count of items (stats curr_items, read apart) before and after it.
func TestFlushMemcachedOnlyWhenAllowed(t *testing.T) {
	err := triggers.Supported(&triggers.Flush{}, triggers.Caps{Memcached: true, MemcachedKeys: true, At: func(f string) string { return "shop.yaml:9: " + f }})
	if err == nil || !strings.Contains(err.Error(), "shop.yaml:9: memcached.allow_flush_all: true to empty") {
		t.Errorf("triggers.Supported(flush) without allow_flush_all = %v; want refused, naming the field at its line", err)
	}
	if err := triggers.Supported(&triggers.Flush{}, triggers.Caps{Memcached: true, FlushAll: true}); err != nil {
		t.Errorf("triggers.Supported(flush) with allow_flush_all = %v; want nil", err)
	}
	env, m, mc := memcachedEnv(t, false)
	if _, err := (&triggers.Flush{}).Fire(context.Background(), env); !errors.Is(err, errFlush) {
		t.Errorf("flush without allow_flush_all = %v; want refused", err)
	}
	if got := cached(t, mc, "other:1"); len(got) != 1 {
		t.Fatalf("a refused flush emptied the cache")
	}
	m.AllowFlushAll = true
	apart := &Client{Address: m.Client.Address} // a stats reader of its own
	t.Cleanup(apart.Close)
	held, err := apart.currItems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fired, err := (&triggers.Flush{}).Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	left, err := apart.currItems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d := fired.Detail.(*triggers.FlushDetail)
	if d.Memcached == nil || d.Memcached.Command != "flush_all" || d.Memcached.Found != nil {
		t.Fatalf("detail = %+v; want the flush_all sent, and no found", d)
	}
	before, after := d.Memcached.ItemsBefore, d.Memcached.ItemsAfter
	t.Logf("flush_all: curr_items %d before, %d after; read apart %d and %d", *before, *after, held, left)
	if held != 6 || before == nil || *before != held || after == nil || *after != left || left != 0 || d.KeysFlushed != held {
		t.Errorf("items before %v, after %v, keys_flushed %d; memcached's curr_items read apart: %d before, %d after: want them equal, 6 and 0", before, after, d.KeysFlushed, held, left)
	}
	if got := cached(t, mc, "item:4", "other:1"); len(got) != 0 {
		t.Errorf("left %v after flush_all; want nothing", got)
	}
}
