package local

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/herdbench/herdbench/internal/machinelock"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// The testbed on Memcached the tests below share, started on first use
// and stopped by TestMain.
var (
	sharedMcOnce sync.Once
	sharedMc     *Testbed
	sharedMcErr  error
)

// sharedMemcachedTestbed is sharedTestbed with the replicas' item cache on
// Memcached (testbed up --cache memcached).
func sharedMemcachedTestbed(t *testing.T) *Testbed {
	t.Helper()
	requireBinaries(t)
	if _, err := (store.Memcached{}).Find(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and memcached is missing: %v", err)
		}
		t.Skipf("memcached missing: %v", err)
	}
	machinelock.Share(t)
	sharedMcOnce.Do(func() {
		o := replica.DefaultOptions
		o.Cache = replica.CacheMemcached
		sharedMc, sharedMcErr = startShared(o)
	})
	if sharedMcErr != nil {
		t.Fatalf("start shared testbed on memcached: %v", sharedMcErr)
	}
	return sharedMc
}

// mcFleet is a fleet whose items live in Memcached.
type mcFleet struct {
	*fleet
	mc *memcache.Client
}

func newMcFleet(t *testing.T, tb *Testbed) *mcFleet {
	st := tb.Status()
	if st.Memcached == "" || st.Proxies[replica.CacheMemcached] == "" {
		t.Fatalf("status = %+v; want memcached's address and its proxy", st)
	}
	return &mcFleet{fleet: newFleet(t, tb), mc: memcache.New(st.Memcached)}
}

// expire deletes an item's fresh copy in Memcached, as an expiry would;
// stale too deletes its stale copy.
func (f *mcFleet) expire(id int64, stale bool) {
	f.t.Helper()
	keys := []string{api.ItemKey(id)}
	if stale {
		keys = append(keys, "stale:"+api.ItemKey(id))
	}
	for _, k := range keys {
		if err := f.mc.Delete(k); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
			f.t.Fatal(err)
		}
	}
}

// has reports whether Memcached holds key.
func (f *mcFleet) has(key string) bool {
	f.t.Helper()
	_, err := f.mc.Get(key)
	if err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
		f.t.Fatal(err)
	}
	return err == nil
}

func TestMemcachedReadPath(t *testing.T) {
	tb := sharedMemcachedTestbed(t)
	f := newMcFleet(t, tb)
	f.configure(`{"strategy":"none","query_cost":"1ms"}`)
	f.expire(31, true)
	var first, second string
	loads := f.loads(func() { first, second = f.get(0, 31), f.get(1, 31) })
	if first != admin.OutcomeMiss || second != admin.OutcomeHit || loads != 1 {
		t.Errorf("a miss then a read from another replica: %s, %s, %d loads; want miss, hit, 1 load", first, second, loads)
	}
	it, err := f.mc.Get(api.ItemKey(31))
	if err != nil {
		t.Fatalf("memcached get %s after the miss: %v", api.ItemKey(31), err)
	}
	var e api.Entry
	if err := json.Unmarshal(it.Value, &e); err != nil || e.Item.ID != 31 || e.ExpiryMS == 0 {
		t.Errorf("memcached holds %s = %q; want item 31's entry with its expiry", api.ItemKey(31), it.Value)
	}
	if !f.has("stale:" + api.ItemKey(31)) {
		t.Errorf("memcached has no stale copy of item 31 after its load")
	}
	if hits, misses := f.metric("herdbench_api_cache_hits_total"), f.metric("herdbench_api_cache_misses_total"); hits != 1 || misses != 1 {
		t.Errorf("cache hits %v, misses %v; want 1 and 1", hits, misses)
	}

	// the fill stores what misses would, in batches, without an item query
	f.configure(`{"strategy":"none","query_cost":"1ms"}`) // counters from here
	for id := int64(200); id <= 260; id++ {
		f.expire(id, true)
	}
	var res admin.FillResponse
	loads = f.loads(func() {
		if res, err = admin.NewClient(f.st.API[0]).Fill(context.Background(), 200, 260); err != nil {
			t.Fatal(err)
		}
	})
	if res.Filled != 61 || loads != 0 || !f.has(api.ItemKey(200)) || !f.has("stale:"+api.ItemKey(260)) {
		t.Errorf("fill 200..260: %+v, %d item loads; want 61 filled into memcached, fresh and stale, and no item query", res, loads)
	}
	if got := f.get(2, 230); got != admin.OutcomeHit {
		t.Errorf("a filled item: %s; want hit", got)
	}
}

// TestMemcachedClaimsCutTheHerd: on Memcached, as on Redis, a herd of
// misses for one key loads about once per request without protection,
// and once fleet-wide under lock or lease, whose claims are Memcached's
// add and whose lock is released by gets+cas.
func TestMemcachedClaimsCutTheHerd(t *testing.T) {
	f := newMcFleet(t, sharedMemcachedTestbed(t))
	f.configure(`{"strategy":"none",` + herdQueryCost + `}`)
	f.expire(32, true)
	var out map[string]int
	loads := f.loads(func() { out = f.herd(32, herdSize) })
	if loads < herdSize*8/10 || loads > herdSize {
		t.Fatalf("none on memcached: %d loads for a herd of %d (outcomes %v); want about %d, or the cuts below prove nothing", loads, herdSize, out, herdSize)
	}
	t.Logf("none on memcached: %d loads for a herd of %d", loads, herdSize)
	for _, tc := range []struct {
		strategy, claim string
		id              int64
	}{{replica.Lock, "lock:", 33}, {replica.Lease, "lease:", 34}} {
		t.Run(tc.strategy, func(t *testing.T) {
			f.t = t
			f.configure(`{"strategy":"` + tc.strategy + `",` + herdQueryCost + `}`)
			f.expire(tc.id, true)
			loads := f.loads(func() { out = f.herd(tc.id, herdSize) })
			t.Logf("%s on memcached: %d loads for a herd of %d, outcomes %v", tc.strategy, loads, herdSize, out)
			if loads != 1 || out[admin.OutcomeMiss] != 1 || out[admin.OutcomeWaited]+out[admin.OutcomeHit] != herdSize-1 || out[admin.OutcomeWaited] == 0 {
				t.Errorf("%s on memcached: %d loads, outcomes %v; want 1 load by the claim's holder and %d waited (or late hits)", tc.strategy, loads, out, herdSize-1)
			}
			if !f.has(api.ItemKey(tc.id)) {
				t.Errorf("%s on memcached: the holder's set left no %s", tc.strategy, api.ItemKey(tc.id))
			}
		})
	}
	// the lock's holder released its own claim; the lease's stays to its end
	if f.t = t; f.has("lock:" + api.ItemKey(33)) {
		t.Errorf("lock:item:33 still held after the herd; want the holder's gets+cas to have released it")
	}
}

// TestMemcachedRefusesWhatNeedsRedis: what Memcached lacks is refused
// before anything starts, with exit 2 and the reason.
func TestMemcachedRefusesWhatNeedsRedis(t *testing.T) {
	serve := []string{"testbed", "serve", "--cache", "memcached", "--memcached", "127.0.0.1:1", "--postgres", "postgres://x@127.0.0.1:1/db"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"refresh has no pub/sub", append(serve, "--write-invalidate", "refresh"), "--write-invalidate: refresh broadcasts the written items on Redis pub/sub, which Memcached lacks"},
		{"queue has no stream without a redis", append(serve, "--write-strategy", "queue"), "--write-strategy: queue keeps the writes in a Redis stream"},
		{"an unknown cache", []string{"testbed", "up", "--cache", "memcache", "--state-dir", stateDir(t)}, `--cache: "memcache" is not a cache (accepted: redis, memcached)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(binary, tc.args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("herdbench %s: %v, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), err, stderr.String(), tc.want)
			}
		})
	}
}

// ttl reads how many seconds Memcached keeps key still (meta get's t
// flag, which gomemcache lacks).
func (f *mcFleet) ttl(key string) time.Duration {
	f.t.Helper()
	c, err := net.DialTimeout("tcp", f.st.Memcached, time.Second)
	if err != nil {
		f.t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "mg %s t\r\n", key); err != nil {
		f.t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		f.t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "HD t")
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		f.t.Fatalf("mg %s t = %q; want HD tN", key, line)
	}
	return time.Duration(n) * time.Second
}

// TestMemcachedStrategies: the other strategies that need the cache do on
// Memcached what they do on Redis, each checked against
// pg_stat_statements.
func TestMemcachedStrategies(t *testing.T) {
	tb := sharedMemcachedTestbed(t)
	f := newMcFleet(t, tb)
	replicas := len(f.st.API)
	t.Run("singleflight loads at most once per replica", func(t *testing.T) {
		f.t = t
		f.configure(`{"strategy":"singleflight",` + herdQueryCost + `}`)
		f.expire(35, true)
		var out map[string]int
		if loads := f.loads(func() { out = f.herd(35, herdSize) }); loads < 1 || loads > replicas || out[admin.OutcomeCoalesced] == 0 {
			t.Errorf("singleflight on memcached: %d loads, outcomes %v; want 1 to %d, some coalesced", loads, out, replicas)
		}
	})
	t.Run("swr serves the stale copy while one refresh runs", func(t *testing.T) {
		f.t = t
		f.configure(`{"strategy":"swr",` + herdQueryCost + `}`)
		f.expire(36, true)
		f.get(0, 36) // the fresh and the stale copy
		f.configure(`{"strategy":"swr",` + herdQueryCost + `}`)
		f.expire(36, false)
		var out map[string]int
		loads := f.loads(func() { out = f.herd(36, herdSize) })
		if loads != 1 || out[admin.OutcomeMiss] != 0 || out[admin.OutcomeStale]+out[admin.OutcomeHit] != herdSize {
			t.Errorf("swr on memcached: %d loads, outcomes %v; want one background refresh, no client-visible miss", loads, out)
		}
	})
	t.Run("xfetch reloads before memcached ends the entry", func(t *testing.T) {
		f.t = t
		// the entry's expiry (1s) comes before memcached's (2 to 3 s): a
		// hit reloads early and no read misses
		f.configure(`{"strategy":"xfetch","ttl":"1s","xfetch_beta":4,"query_cost":"50ms"}`)
		f.expire(37, true)
		var out map[string]int
		loads := f.loads(func() { out = steadyReads(f.fleet, 37, 3500*time.Millisecond) })
		if out[admin.OutcomeMiss] != 0 || out[admin.OutcomeEarly] < 3 || loads != out[admin.OutcomeEarly]+1 {
			t.Errorf("xfetch on memcached: %d loads, outcomes after warmup %v; want no misses, an early reload each TTL (3 or more), each a load, plus the warmup", loads, out)
		}
	})
	t.Run("ttl_jitter spreads memcached's expiries", func(t *testing.T) {
		f.t = t
		f.configure(`{"strategy":"ttl_jitter","ttl":"100s","ttl_jitter":0.5,"query_cost":"0s"}`)
		lo, hi := time.Hour, time.Duration(0)
		for i := range int64(60) {
			f.expire(900+i, true)
			f.get(int(i), 900+i)
			d := f.ttl(api.ItemKey(900 + i))
			lo, hi = min(lo, d), max(hi, d)
		}
		// 100s plus up to half, rounded up and one more second
		if lo < 95*time.Second || hi > 152*time.Second || hi-lo < 25*time.Second {
			t.Errorf("ttl_jitter 0.5 of 100s on memcached: TTLs span [%v, %v]; want spread over [100s, 152s]", lo, hi)
		}
	})
	t.Run("local spares memcached", func(t *testing.T) {
		f.t = t
		f.configure(`{"strategy":"local","local_ttl":"10s","query_cost":"1ms"}`)
		f.expire(38, true)
		const n = 30
		for i := range n {
			f.get(i, 38)
		}
		local := int(f.metric("herdbench_api_local_hits_total"))
		reads := int(f.metric("herdbench_api_cache_hits_total") + f.metric("herdbench_api_cache_misses_total"))
		if local != n-replicas || reads != replicas {
			t.Errorf("local on memcached: %d local hits, %d cache reads for %d requests; want %d and %d", local, reads, n, n-replicas, replicas)
		}
	})
}
