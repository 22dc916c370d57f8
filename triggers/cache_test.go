package triggers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// shelf is a throwaway cache, declared in this test file only: a map of
// entries that can be deleted, emptied and given an expiry. The cache
// triggers act on it without a change of theirs, as they act on Redis,
// Memcached and an HTTP cache.
type shelf struct {
	name    string
	entries map[string]time.Time // key -> expiry; zero: none
}

var (
	_ Cache   = (*shelf)(nil)
	_ Expirer = (*shelf)(nil)
)

func newShelf(name string, keys ...string) *shelf {
	s := &shelf{name: name, entries: map[string]time.Time{}}
	for _, k := range keys {
		s.entries[k] = time.Time{}
	}
	return s
}

func (s *shelf) Keyed() bool   { return true }
func (s *shelf) Flushes() bool { return true }
func (s *shelf) DescribeDelete(hot []string) string {
	return fmt.Sprintf("take %d keys off %s", len(hot), s.name)
}
func (s *shelf) DescribeFlush() string { return "empty " + s.name }
func (s *shelf) DescribeExpireAt(hot []string) string {
	return fmt.Sprintf("date %d keys on %s", len(hot), s.name)
}

func (s *shelf) Delete(_ context.Context, hot []string) (Touched, error) {
	t := Touched{Keys: len(hot)}
	for _, k := range hot {
		if _, ok := s.entries[k]; ok {
			delete(s.entries, k)
			t.Removed++
		}
	}
	return t, nil
}

func (s *shelf) Flush(context.Context, Env) (Touched, error) {
	n := len(s.entries)
	clear(s.entries)
	return Touched{Removed: int64(n)}, nil
}

func (s *shelf) ExpireAt(_ context.Context, hot []string, at time.Time) (Touched, error) {
	for _, k := range hot {
		if _, ok := s.entries[k]; ok {
			s.entries[k] = at
		}
	}
	return Touched{Keys: len(hot)}, nil
}

// A kind of cache is one type: expire, flush and ttl plan and act on every
// cache of Env.Caches in order, and add what each did to their details.
func TestAThrowawayCacheIsActedOnByEveryCacheTrigger(t *testing.T) {
	ctx := context.Background()
	a, b := newShelf("a", "1", "2", "3", "4"), newShelf("b", "2", "5")
	env := Env{Caches: []Cache{a, b}, HotKeys: []string{"1", "2", "9"}, T: time.Unix(1700000000, 0)}

	if got, want := (&Expire{}).Plan(env), "take 3 keys off a; and take 3 keys off b"; got != want {
		t.Errorf("Expire.Plan = %q; want %q", got, want)
	}
	fired, err := (&Expire{}).Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if d := fired.Detail.(*ExpireDetail); d.Keys != 3 || d.KeysRemoved != 3 {
		t.Errorf("Expire.Fire = %+v; want 3 keys, 3 removed (1, 2 from a; 2 from b)", d)
	}
	if got := slices.Sorted(maps.Keys(a.entries)); strings.Join(got, ",") != "3,4" {
		t.Errorf("a holds %v after expire; want 3, 4", got)
	}

	ttl := &TTL{}
	if got, want := ttl.Plan(env), "date 3 keys on a; and date 3 keys on b"; got != want {
		t.Errorf("TTL.Plan = %q; want %q", got, want)
	}
	if err := ttl.Align(ctx, env); err != nil {
		t.Fatal(err)
	}
	if !a.entries["3"].IsZero() || !b.entries["5"].IsZero() {
		t.Errorf("ttl dated a key that is not hot")
	}
	if fired, _ := ttl.Fire(ctx, env); fired.Detail.(*TTLDetail).Keys != 3 {
		t.Errorf("TTL.Fire = %+v; want the 3 hot keys Align dated", fired.Detail)
	}

	if got, want := (&Flush{}).Plan(env), "empty a; and empty b"; got != want {
		t.Errorf("Flush.Plan = %q; want %q", got, want)
	}
	fired, err = (&Flush{}).Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if d := fired.Detail.(*FlushDetail); d.KeysFlushed != 3 || len(a.entries)+len(b.entries) != 0 {
		t.Errorf("Flush.Fire = %+v, left %d; want the 3 keys left flushed, none left", d, len(a.entries)+len(b.entries))
	}

	if _, err := (&Expire{}).Fire(ctx, Env{}); err == nil || !strings.Contains(err.Error(), "no http_cache, no Redis keys and no Memcached") {
		t.Errorf("Expire.Fire without a cache = %v; want refused", err)
	}
}
