package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// lookAsideReconnect is what a query given up mid-flight costs its
// connection's place, from the pools' own counters of the two stuck
// look-aside runs of docs/metastability.md (2026-11-25, each an after
// window of 20 s, 30 connections churning once the waits passed the
// clients' second): 30 × 20 s / 3,458 new connections = 173 ms ("A
// tipped cache stays cold", 237 keys at 1,000 req/s) and 30 × 20 s /
// 3,626 = 165 ms (the first table's, 400 keys). Their mean, rounded.
const lookAsideReconnect = 170 * time.Millisecond

// sweepBed is the testbed of docs/metastability.md's "A look-aside
// cache": each input from its sweep's command or the testbed's defaults.
func sweepBed(rate float64, strategy string) LookAside {
	return LookAside{
		Rate:      rate,                   // --rate
		Keys:      1000,                   // --keys 1000
		Zipf:      1.1,                    // the stampede's default --zipf
		Replicas:  3,                      // the local testbed's default
		Pool:      10,                     // db_pool's default
		Cost:      200 * time.Millisecond, // --query-cost 200ms
		DBTimeout: 5 * time.Second,        // db_timeout's default
		Timeout:   time.Second,            // --timeout 1s
		Canceled:  true,                   // --abandoned-load canceled
		Strategy:  strategy,               // --arms
		Reconnect: lookAsideReconnect,
		Horizon:   20 * time.Second, // --after auto:20s
		Runs:      15,               // the model's majority; the sweep's is of up to 3 (--repeat 3)
		Seed:      1,
	}
}

// near: got is within tol (a share) of want.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

func lookAsideTip(t testing.TB, la LookAside) int {
	t.Helper()
	k, ok, err := la.TippingPoint()
	if err != nil || !ok {
		t.Fatalf("%v req/s %s: TippingPoint = %d, %v, %v; want a tip", la.Rate, la.Strategy, k, ok, err)
	}
	return k
}

// TestLookAsideTippingPoints holds the model's tipping points beside the
// repeat-3 sweeps of docs/metastability.md, "A look-aside cache", each
// judged by results v2's rule (2026-11-29): the fewest hot keys whose
// expiry the arm does not come back from, within 25%.
func TestLookAsideTippingPoints(t *testing.T) {
	cases := []struct {
		rate     float64
		strategy string
		measured int    // the tip; the bracket's other end survived
		source   string // when, from the doc
		within   bool   // held to 25%; false: only the order below (the doc's "Where it misses")
		answered bool   // measured tipped by p99 and DB work alone, every request answered
	}{
		{500, LookAsideNone, 237, "[205, 237], 2026-11-29 07:28:53-07:31:58 UTC", true, true},
		{1000, LookAsideNone, 65, "[57, 65], 2026-11-29 05:00:03-05:03:32 UTC", false, false},
		// again on a quieter machine (load average 4.8 to 13.2), the
		// first command of "A look-aside cache" with --repeat 3
		{1000, LookAsideNone, 133, "[115, 133], 2026-12-03 08:36:22-08:39:31 UTC", true, false},
		{2000, LookAsideNone, 50, "[43, 50], 2026-11-29 07:31:58-07:35:00 UTC", true, false},
		{1000, LookAsideSingleflight, 316, "[274, 316], 2026-11-29 05:14:09-05:20:33 UTC", true, false},
		{1000, LookAsideLock, 421, "[365, 421], 2026-11-29 05:14:09-05:20:33 UTC", true, true},
	}
	got := map[string]int{}
	for _, c := range cases {
		la := sweepBed(c.rate, c.strategy)
		k := lookAsideTip(t, la)
		got[fmt.Sprintf("%s@%v", c.strategy, c.rate)] = k
		off := float64(k-c.measured) / float64(c.measured)
		t.Logf("%v req/s %s: measured %d (v2, repeat 3, %s), model %d (%+.0f%%)", c.rate, c.strategy, c.measured, c.source, k, 100*off)
		if c.within && math.Abs(off) > 0.25 {
			t.Errorf("%v req/s %s: the model's tip %d is %+.0f%% from the measured %d (%s); want within 25%%", c.rate, c.strategy, k, 100*off, c.measured, c.source)
		}
		if !c.answered {
			continue
		}
		_, _, runs := la.Probe(k)
		for i, v := range runs {
			if v.Tips && v.Stuck {
				t.Errorf("%v req/s %s at %d keys: run %d tipped with its goodput under the band (%.2f); the measured runs answered every request", c.rate, c.strategy, k, i, v.Goodput)
			}
		}
	}
	// The order the sweeps measured: the higher the load, the smaller the
	// herd that tips it (237, 65, 50); at 1,000 req/s the coalescing arms
	// move the tip up, the fleet's lock the most (65, 316, 421).
	n500, n1000, n2000 := got["none@500"], got["none@1000"], got["none@2000"]
	if !(n500 > n1000 && n1000 > n2000) {
		t.Errorf("none's tips by rate: 500 req/s %d, 1,000 %d, 2,000 %d; want falling, as measured (237, 65, 50)", n500, n1000, n2000)
	}
	if sf, lock := got["singleflight@1000"], got["lock@1000"]; !(n1000 < sf && sf < lock) {
		t.Errorf("the tips at 1,000 req/s: none %d, singleflight %d, lock %d; want rising, as measured (65, 316, 421)", n1000, sf, lock)
	}
}

// TestLookAsideStuckStateIsTheMeasuredOne holds a run past the tip
// beside the two stuck runs of docs/metastability.md (2026-11-25, their
// counters, which no verdict's rule moves): loads finished, loads failed
// and the goodput the cache kept, within 25%. Their new connections gave
// lookAsideReconnect, so they are not held here.
func TestLookAsideStuckStateIsTheMeasuredOne(t *testing.T) {
	cases := []struct {
		hot               int
		loads, failed     int
		goodput           float64
		source            string
		firstDB, secondDB int // q/s the first and second second from T; -1: not given
	}{
		// "A tipped cache stays cold": 158 loads, 4,189 failed, goodput
		// 79% of the baseline; Postgres 120 q/s, then 36, then 0 to 11
		{237, 158, 4189, 0.79, "A look-aside cache, A tipped cache stays cold", 120, 36},
		// the first table of "Why the service stays down": 150 loads,
		// 5,809 load errors, goodput 710/s of 1,000
		{400, 150, 5809, 0.71, "Why the service stays down, the first table", -1, -1},
	}
	la := sweepBed(1000, LookAsideNone)
	for _, c := range cases {
		tl := la.Simulate(c.hot, la.Seed)
		v := la.Judge(tl)
		last := float64(sumInts(tl.OK[len(tl.OK)-laHoldRows:])) / la.Rate
		t.Logf("%d keys (%s): loads %d (measured %d), failed %d (%d), of which waits given up %d, queries cut %d; goodput %.2f (%.2f); DB %d, %d q/s (%d, %d)",
			c.hot, c.source, tl.Loads, c.loads, tl.Dropped+tl.Cut, c.failed, tl.Dropped, tl.Cut, last, c.goodput,
			sumInts(tl.DB[:laHoldRows]), sumInts(tl.DB[laHoldRows:2*laHoldRows]), c.firstDB, c.secondDB)
		if !v.Tips || !v.Stuck {
			t.Errorf("%d keys: %+v; want tipped with the cache cold (goodput under the band)", c.hot, v)
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"loads", float64(tl.Loads), float64(c.loads)}, {"failed loads", float64(tl.Dropped + tl.Cut), float64(c.failed)},
			{"goodput at the horizon", last, c.goodput}} {
			if !near(f.got, f.want, 0.25) {
				t.Errorf("%d keys: %s %.2f; measured %.2f (%s): want within 25%%", c.hot, f.name, f.got, f.want, c.source)
			}
		}
		if c.firstDB >= 0 {
			first, second := sumInts(tl.DB[:laHoldRows]), sumInts(tl.DB[laHoldRows:2*laHoldRows])
			if !near(float64(first), float64(c.firstDB), 0.25) || !near(float64(second), float64(c.secondDB), 0.25) {
				t.Errorf("%d keys: DB %d then %d q/s; measured %d then %d: want within 25%%", c.hot, first, second, c.firstDB, c.secondDB)
			}
			if after := tl.DB[2*laHoldRows:]; sumInts(after) > 11*len(after)/laHoldRows {
				t.Errorf("%d keys: DB %d queries from T+2 s; measured 0 to 11 q/s", c.hot, sumInts(after))
			}
		}
	}
}

// TestLookAsideLockRefillsEveryKey: with the fleet's lock and every key
// expired at 1,000 req/s, the testbed refilled the cache with 921 queries
// for 1,000 keys and came back in 13.8 s (docs/metastability.md, "A
// look-aside cache", 2026-11-25, one run, v1's rule, the arm run 20 s).
// The model's loads are held to 25% (the median of 9 runs) and its
// coming back within the 20 s (a majority); its recovery, by v2's band,
// is only logged: the rules differ (the doc's "Where it misses").
func TestLookAsideLockRefillsEveryKey(t *testing.T) {
	la := sweepBed(1000, LookAsideLock)
	var loads []int
	var backs []time.Duration
	for seed := uint64(1); seed <= 9; seed++ {
		tl := la.Simulate(1000, seed)
		loads = append(loads, tl.Loads)
		if back, ok := la.Back(tl); ok {
			backs = append(backs, back)
		}
	}
	slices.Sort(loads)
	slices.Sort(backs)
	t.Logf("lock, 1,000 keys, 9 runs: loads %v (measured 921), back in %d: %v (measured 13.8 s by v1's rule)", loads, len(backs), backs)
	if !near(float64(loads[4]), 921, 0.25) {
		t.Errorf("lock: %d loads (median of 9); measured 921: want within 25%%", loads[4])
	}
	if len(backs) < 5 {
		t.Errorf("lock: %d of 9 runs back within 20 s; the measured one was back in 13.8 s: want a majority", len(backs))
	}
}

// TestLookAsideNeedsCanceledLoads: the look-aside loop is the canceled
// loads' (docs/metastability.md: "The two published shapes need the
// two"): past the tip, loads that die with their requests leave the
// cache cold to the horizon; detached ones, which run on to their
// db-timeout, refill it.
func TestLookAsideNeedsCanceledLoads(t *testing.T) {
	canceled := sweepBed(1000, LookAsideNone)
	detached := canceled
	detached.Canceled = false
	if _, ok := canceled.Back(canceled.Simulate(400, 1)); ok {
		t.Errorf("canceled loads, 400 keys at 1,000 req/s: back within the horizon; want the cache cold")
	}
	tl := detached.Simulate(400, 1)
	back, ok := detached.Back(tl)
	if !ok || tl.Dropped+tl.Cut != 0 {
		t.Errorf("detached loads, 400 keys at 1,000 req/s: back %v, %v, %d loads given up; want back, none given up", back, ok, tl.Dropped+tl.Cut)
	}
}

// TestLookAsideRunIsTheJudgedSimulation: Run, which simulates only as
// far as the judge reads, says what judging the whole run says.
func TestLookAsideRunIsTheJudgedSimulation(t *testing.T) {
	for _, s := range []string{LookAsideNone, LookAsideSingleflight, LookAsideLock} {
		la := sweepBed(1000, s)
		for _, hot := range []int{20, 100, 237, 1000} {
			if got, want := la.Run(hot, 3), la.Judge(la.Simulate(hot, 3)); got != want {
				t.Errorf("%s, %d keys: Run = %+v; Judge(Simulate) = %+v", s, hot, got, want)
			}
		}
	}
}

// TestLookAsideZipfShare: the share ZipfShare computes is the share of
// the draws of the generator's distribution (math/rand/v2's Zipf over
// ids 1..keys, as load.NewKeys draws them) that fall on the hottest keys.
func TestLookAsideZipfShare(t *testing.T) {
	if s := ZipfShare(1000, 1000, 1.1); s != 1 {
		t.Errorf("ZipfShare(1000, 1000, 1.1) = %v; want 1", s)
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(7, 7)), 1.1, 1, 999)
	const draws = 200_000
	hits := map[int]int{}
	for range draws {
		id := int(z.Uint64()) + 1
		for _, k := range []int{1, 65, 237} {
			if id <= k {
				hits[k]++
			}
		}
	}
	for _, k := range []int{1, 65, 237} {
		if got, want := float64(hits[k])/draws, ZipfShare(k, 1000, 1.1); math.Abs(got-want) > 0.005 {
			t.Errorf("the %d hottest of 1,000 keys drew %.4f of the requests; ZipfShare = %.4f", k, got, want)
		}
	}
}

func TestLookAsideBadInputNamesTheField(t *testing.T) {
	for field, mutate := range map[string]func(*LookAside){
		"rate":     func(la *LookAside) { la.Rate = 0 },
		"keys":     func(la *LookAside) { la.Keys = 0 },
		"zipf":     func(la *LookAside) { la.Zipf = 1 },
		"pool":     func(la *LookAside) { la.Pool = 0 },
		"query":    func(la *LookAside) { la.Cost = 0 },
		"horizon":  func(la *LookAside) { la.Horizon = 2 * time.Second },
		"runs":     func(la *LookAside) { la.Runs = 0 },
		"strategy": func(la *LookAside) { la.Strategy = "xfetch" },
	} {
		la := sweepBed(1000, LookAsideNone)
		mutate(&la)
		_, _, err := la.TippingPoint()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: TippingPoint's error %v; want one naming %s", field, err, field)
		}
	}
}

// BenchmarkLookAsideTippingPoint bisects the largest of the sweeps'
// cases, 2,000 req/s, 15 runs a probe.
func BenchmarkLookAsideTippingPoint(b *testing.B) {
	la := sweepBed(2000, LookAsideNone)
	for b.Loop() {
		lookAsideTip(b, la)
	}
}

// The look-aside cache's escapes measured with --escape on at 1,000
// req/s (docs/metastability.md, "The escape load" and "With a
// mitigation": one run each, 2026-11-29, --after auto:90s), beside the
// model's, each the median of 15 runs at either reconnect measured on
// this testbed (173 ms on 2026-11-25, 348 ms on 2026-12-03; the runs of
// 2026-11-29 kept none). Tolerance: the measured step, or the one below
// it. The model's figures are pinned, so the doc's table stays true:
// three of the eight on the measured step, seven within tolerance, and
// lock's at 348 ms two steps below; where it misses the step, the model
// is stuck longer than the runs were, never shorter.
func TestLookAsideEscapesBesideTheMeasured(t *testing.T) {
	shares := []float64{0.75, 0.5, 0.25, 0.1} // --escape on's steps, each up to 10 s
	exact, within := 0, 0
	for _, c := range []struct {
		strategy string
		hot      int
		measured float64
		model    [2]float64 // at 173 ms and 348 ms
	}{
		{LookAsideNone, 400, 0.25, [2]float64{0.1, 0.1}},           // metastable, misses x885; back at 250 req/s
		{LookAsideSingleflight, 400, 0.75, [2]float64{0.75, 0.75}}, // metastable by its p99; back at 750 req/s
		{LookAsideSingleflight, 1000, 0.1, [2]float64{0.1, 0}},     // misses x1691; back at 100 req/s
		{LookAsideLock, 1000, 0.75, [2]float64{0.5, 0.25}},         // by p99 and DB work alone; back at 750 req/s
	} {
		for k, reconnect := range []time.Duration{173 * time.Millisecond, 348 * time.Millisecond} {
			la := sweepBed(1000, c.strategy)
			la.Reconnect, la.Horizon = reconnect, 90*time.Second
			got := la.EscapeProbe(c.hot, shares, 10*time.Second)
			if got == nil || *got != c.model[k] {
				t.Errorf("%s, %d hot keys, reconnect %v: the model's escape %v; want %v, as docs/metastability.md's table says", c.strategy, c.hot, reconnect, got, c.model[k])
				continue
			}
			i := slices.Index(shares, c.measured)
			below := 0.0 // none found: below every step
			if i+1 < len(shares) {
				below = shares[i+1]
			}
			if *got == c.measured {
				exact++
			}
			if *got == c.measured || *got == below {
				within++
			}
			t.Logf("%s, %d hot keys, reconnect %v: measured back at %v of the rate, the model at %v", c.strategy, c.hot, reconnect, c.measured, *got)
		}
	}
	if exact != 3 || within != 7 {
		t.Errorf("%d of 8 on the measured step, %d on it or the one below; the table says 3 and 7", exact, within)
	}
}

// The escape's steps pace the load as the generator's schedule does:
// each row before a step holds the rate's share of requests, each row of
// the step the step's (within one: a request due on a row's edge may
// fall in the row before, as the model's rows are cut in floating
// point), and each part its whole count.
func TestLookAsideStepsPaceTheLoad(t *testing.T) {
	la := sweepBed(1000, LookAsideNone)
	la.Horizon = 8 * time.Second
	s := la.newSim(400, 1)
	s.stepDown(3, 750)
	s.stepDown(5.5, 100)
	s.advance(math.Inf(1))
	sums := map[int]int{}
	for r, n := range s.tl.Sent {
		want, part := 100, 0 // 1,000 req/s, 100 ms rows
		switch {
		case r >= 55:
			want, part = 10, 2
		case r >= 30:
			want, part = 75, 1
		}
		sums[part] += n
		if n < want-1 || n > want+1 {
			t.Errorf("row %d (T+%v): %d requests; want %d", r, time.Duration(r)*LookAsideRow, n, want)
		}
	}
	if sums[0] != 3000 || sums[1] != 1875 || sums[2] != 250 || s.next != 5125 {
		t.Errorf("requests a part %v, %d in all; want 3,000, 1,875 and 250, 5,125", sums, s.next)
	}
}

// What decides none's escape is the reconnect: from none down to the
// figures the runs bound it by, the model's escape at 400 hot keys falls
// from 75% to 10% of the rate, where its tipping point moves far less
// (203 to 109 keys). The runs' bound (a pool's connections over the new
// ones a second: 173 to 348 ms) counts a cut query's own time before its
// cut too, so it is loose by up to the query's cost (200 ms); the two
// escapes measured, 50% and 25%, are the model's at 20 to 50 ms and at
// 100 ms. docs/metastability.md, "The escape load" of the look-aside.
func TestTheReconnectDecidesTheLookAsideEscape(t *testing.T) {
	shares := []float64{0.75, 0.5, 0.25, 0.1}
	for _, c := range []struct {
		reconnect time.Duration
		escape    float64
		tip       int
	}{
		{0, 0.75, 203}, {20 * time.Millisecond, 0.5, 190}, {50 * time.Millisecond, 0.5, 163},
		{100 * time.Millisecond, 0.25, 142}, {173 * time.Millisecond, 0.1, 119}, {269 * time.Millisecond, 0.1, 109},
	} {
		la := sweepBed(1000, LookAsideNone)
		la.Reconnect, la.Horizon, la.Seed = c.reconnect, 90*time.Second, 7
		e := la.EscapeProbe(400, shares, 10*time.Second)
		tip, found, err := la.TippingPoint()
		if e == nil || *e != c.escape || !found || err != nil || tip != c.tip {
			t.Errorf("reconnect %v: escape %v, tip %d (%v, %v); want %v and %d", c.reconnect, e, tip, found, err, c.escape, c.tip)
		}
	}
}
