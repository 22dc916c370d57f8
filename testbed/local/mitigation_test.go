package local

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
)

// herdSize is how many concurrent requests hit one expired key. The query
// holds its connection for 200ms, so every request of the herd reads the
// cache long before the first load could refill it.
const herdSize = 30

const herdQueryCost = `"query_cost":"200ms"`

func TestHerdWithoutMitigationLoadsOncePerRequest(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	f.configure(`{"strategy":"none",` + herdQueryCost + `}`)
	f.expire(11, true)
	var out map[string]int
	loads := f.loads(func() { out = f.herd(11, herdSize) })
	// a request that read the cache after the first load refilled it hits
	if out[admin.OutcomeMiss]+out[admin.OutcomeHit] != herdSize || out[admin.OutcomeMiss] < herdSize*8/10 {
		t.Errorf("outcomes = %v; want about %d misses, the rest hits", out, herdSize)
	}
	// a request that read the cache after the first load refilled it would
	// hit; with 200ms loads none should
	if loads < herdSize*8/10 || loads > herdSize {
		t.Errorf("none: %d loads for a herd of %d on one key; want about %d", loads, herdSize, herdSize)
	}
}

func TestSingleflightLoadsAtMostOncePerReplica(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	f.configure(`{"strategy":"singleflight",` + herdQueryCost + `}`)
	f.expire(12, true)
	var out map[string]int
	loads := f.loads(func() { out = f.herd(12, herdSize) })
	replicas := len(tb.Status().API)
	if loads < 1 || loads > replicas {
		t.Errorf("singleflight: %d loads over %d replicas; want 1 to %d", loads, replicas, replicas)
	}
	if out[admin.OutcomeMiss]+out[admin.OutcomeCoalesced]+out[admin.OutcomeHit] != herdSize || out[admin.OutcomeCoalesced] == 0 {
		t.Errorf("outcomes = %v; want every request a miss, coalesced or (late) hit, some coalesced", out)
	}
	if got := f.metric("herdbench_api_coalesced_total"); int(got) != out[admin.OutcomeCoalesced] {
		t.Errorf("herdbench_api_coalesced_total = %v; clients saw %d coalesced", got, out[admin.OutcomeCoalesced])
	}
}

func TestLockLoadsOnceFleetWide(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	for _, tc := range []struct {
		name   string
		stale  bool   // a stale copy exists
		others string // how the rest are served
	}{
		{"waiters re-read without a stale copy", false, admin.OutcomeWaited},
		{"stale copy served while one loads", true, admin.OutcomeStale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			f.configure(`{"strategy":"lock",` + herdQueryCost + `}`)
			if tc.stale {
				f.expire(13, true)
				f.get(0, 13) // the load writes the stale copy too
			}
			f.configure(`{"strategy":"lock",` + herdQueryCost + `}`)
			f.expire(13, !tc.stale)
			var out map[string]int
			loads := f.loads(func() { out = f.herd(13, herdSize) })
			if loads != 1 {
				t.Errorf("lock: %d loads fleet-wide; want exactly 1", loads)
			}
			// a request that took the lock only after the load found the
			// value on its re-read: a hit, not a second load
			if out[admin.OutcomeMiss] != 1 || out[tc.others]+out[admin.OutcomeHit] != herdSize-1 || out[tc.others] == 0 {
				t.Errorf("outcomes = %v; want 1 miss and %d %s (or hit), no errors", out, herdSize-1, tc.others)
			}
			if tc.others == admin.OutcomeWaited {
				// every waited answer waited; a waiter may also end as a hit
				if got := int(f.metric("herdbench_api_lock_waits_total")); got < out[admin.OutcomeWaited] || got > out[admin.OutcomeWaited]+out[admin.OutcomeHit] {
					t.Errorf("herdbench_api_lock_waits_total = %d; clients saw %d waited and %d hit", got, out[admin.OutcomeWaited], out[admin.OutcomeHit])
				}
			} else if got := f.metric("herdbench_api_stale_served_total"); int(got) != out[admin.OutcomeStale] {
				t.Errorf("herdbench_api_stale_served_total = %v; clients saw %d stale", got, out[admin.OutcomeStale])
			}
		})
	}
}

func TestLockOfCrashedHolderExpires(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	f.configure(`{"strategy":"lock","lock_ttl":"300ms","lock_wait":"5s","query_cost":"10ms"}`)
	f.expire(14, true)
	// a holder that took the lock and died: nobody will release it
	if err := f.rdb.Set(context.Background(), "lock:item:14", "crashed", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	var out map[string]int
	loads := f.loads(func() { out = f.herd(14, 5) })
	if loads != 1 {
		t.Errorf("after the crashed holder's lock expired: %d loads; want 1", loads)
	}
	// the rest waited, or took the lock after the load and found the value
	if out[admin.OutcomeMiss] != 1 || out[admin.OutcomeWaited]+out[admin.OutcomeHit] != 4 {
		t.Errorf("outcomes = %v; want 1 miss (took over the expired lock) and 4 waited or hit", out)
	}
}

// steadyReads reads one item from every replica for d, several clients at
// once, and counts outcomes after the first request warmed the cache.
func steadyReads(f *fleet, id int64, d time.Duration) map[string]int {
	f.get(0, id) // warm
	var mu sync.Mutex
	counts := map[string]int{}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for i := c; time.Now().Before(deadline); i++ {
				o := f.get(i, id)
				mu.Lock()
				counts[o]++
				mu.Unlock()
				<-tick.C
			}
		})
	}
	wg.Wait()
	return counts
}

func TestXFetchReloadsBeforeExpiry(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	// Three TTLs of steady reads. With beta=4 and loads of about 50ms, the
	// chance that no read recomputes in the last 100ms before an expiry is
	// about e^-12, so a miss after warmup means xfetch is broken.
	const knobs = `"ttl":"1s","xfetch_beta":4,"query_cost":"50ms"`
	f.configure(`{"strategy":"xfetch",` + knobs + `}`)
	f.expire(15, true)
	var out map[string]int
	loads := f.loads(func() { out = steadyReads(f, 15, 3500*time.Millisecond) })
	if out[admin.OutcomeMiss] != 0 {
		t.Errorf("xfetch: outcomes after warmup = %v; want no misses", out)
	}
	if out[admin.OutcomeEarly] < 3 || loads != out[admin.OutcomeEarly]+1 {
		t.Errorf("xfetch: %d loads, outcomes %v; want at least one early reload per TTL (3), each a load, plus the warmup", loads, out)
	}

	// The control: the same reads without xfetch miss at every expiry, so
	// the assertion above can fail.
	f.configure(`{"strategy":"none",` + knobs + `}`)
	f.expire(15, true)
	out = steadyReads(f, 15, 2500*time.Millisecond)
	if out[admin.OutcomeMiss] < 2 {
		t.Errorf("none: outcomes after warmup = %v; want misses at each expiry (2 or more)", out)
	}
}

func TestTTLJitterSpreadsTTLs(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	const ttl, n = 100 * time.Second, 120
	pttls := func(strategy string, first int64) (lo, hi time.Duration, upperHalf int) {
		f.configure(fmt.Sprintf(`{"strategy":%q,"ttl":"100s","ttl_jitter":0.5,"query_cost":"0s"}`, strategy))
		var wg sync.WaitGroup
		for i := range int64(n) {
			wg.Go(func() {
				f.expire(first+i, true)
				f.get(int(i), first+i)
			})
		}
		wg.Wait()
		lo = time.Hour
		for i := range int64(n) {
			d, err := f.rdb.PTTL(context.Background(), api.ItemKey(first+i)).Result()
			if err != nil {
				t.Fatal(err)
			}
			lo, hi = min(lo, d), max(hi, d)
			if d > ttl+ttl/4 {
				upperHalf++
			}
		}
		return lo, hi, upperHalf
	}

	lo, hi, upper := pttls("ttl_jitter", 101)
	// TTL plus up to half of it: [100s, 150s], less the seconds the test took
	if lo < ttl-5*time.Second || hi > ttl+ttl/2 {
		t.Errorf("ttl_jitter 0.5: TTLs span [%v, %v]; want within [%v, %v]", lo, hi, ttl, ttl+ttl/2)
	}
	if hi-lo < ttl/4 || upper < n/4 || upper > 3*n/4 {
		t.Errorf("ttl_jitter 0.5: TTLs span [%v, %v] with %d of %d in the upper half; want spread over the band", lo, hi, upper, n)
	}

	lo, hi, _ = pttls("none", 301)
	if hi > ttl || hi-lo > 5*time.Second {
		t.Errorf("without ttl_jitter: TTLs span [%v, %v]; want all about %v", lo, hi, ttl)
	}
}

func TestSWRServesStaleWhileOneRefreshRuns(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	f.configure(`{"strategy":"swr",` + herdQueryCost + `}`)
	f.expire(21, true)
	f.get(0, 21) // loads: writes the fresh and the stale copy
	f.configure(`{"strategy":"swr",` + herdQueryCost + `}`)
	f.expire(21, false) // the fresh copy goes, the stale one stays
	var out map[string]int
	loads := f.loads(func() { out = f.herd(21, herdSize) })
	if out[admin.OutcomeMiss] != 0 || out[admin.OutcomeStale]+out[admin.OutcomeHit] != herdSize {
		t.Errorf("swr: outcomes %v; want no client-visible miss: stale (or hit once refreshed)", out)
	}
	if loads != 1 {
		t.Errorf("swr: %d loads; want exactly one background refresh fleet-wide", loads)
	}
}

func TestLeaseLoadsOncePerKey(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	f.configure(`{"strategy":"lease",` + herdQueryCost + `}`)
	f.expire(22, true)
	var out map[string]int
	loads := f.loads(func() { out = f.herd(22, herdSize) })
	if loads != 1 || out[admin.OutcomeMiss] != 1 || out[admin.OutcomeWaited]+out[admin.OutcomeHit] != herdSize-1 || out[admin.OutcomeWaited] == 0 {
		t.Errorf("lease: %d loads, outcomes %v; want one load by the token holder and %d waited (or late hits)", loads, out, herdSize-1)
	}
}

func TestLocalTierSparesRedis(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	f.configure(`{"strategy":"local","local_ttl":"10s","query_cost":"1ms"}`)
	f.expire(23, true)
	const n = 90
	for i := range n {
		f.get(i, 23)
	}
	local := int(f.metric("herdbench_api_local_hits_total"))
	reads := int(f.metric("herdbench_api_cache_hits_total") + f.metric("herdbench_api_cache_misses_total"))
	// each replica reads Redis once, then answers from its own copy
	if replicas := len(tb.Status().API); local != n-replicas || reads != replicas {
		t.Errorf("local: %d local hits, %d Redis reads for %d requests over %d replicas; want %d and %d: Redis reads drop by the local hit ratio",
			local, reads, n, replicas, n-replicas, replicas)
	}
}

func TestEarlyRefreshesWithItsProbability(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	f.configure(`{"strategy":"early","early_probability":0.5,"query_cost":"1ms"}`)
	f.expire(24, true)
	f.get(0, 24)                                                                   // warm
	f.configure(`{"strategy":"early","early_probability":0.5,"query_cost":"1ms"}`) // counters from here
	const n = 200
	loads := f.loads(func() {
		for i := range n {
			f.get(i, 24)
		}
	})
	early := int(f.metric("herdbench_api_early_loads_total"))
	// binomial(200, 0.5): 100 +- 7; every early refresh is one load
	if early < 60 || early > 140 || loads != early {
		t.Errorf("early 0.5: %d early refreshes and %d loads over %d hits; want about 100, each a load", early, loads, n)
	}
}
