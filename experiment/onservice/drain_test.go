package onservice_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/testbed/cachetest"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// gatedShop is a service on Memcached whose item requests, once held,
// wait at a gate until it opens, then 300 ms more (its own work), then
// read their item in Memcached and set it on a miss: what the load's end
// leaves in HAProxy's sessions and the cache's commands.
type gatedShop struct {
	mc       *memcache.Client
	held     atomic.Bool
	gate     chan struct{}
	inFlight atomic.Int64
}

func (s *gatedShop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if s.held.Load() {
		<-s.gate
		time.Sleep(300 * time.Millisecond) // the service's own work, not a wait of the test's
	}
	key := "item:" + strings.TrimPrefix(r.URL.Path, "/items/")
	if it, err := s.mc.Get(key); err == nil {
		w.Write(it.Value)
		return
	}
	if err := s.mc.Set(&memcache.Item{Key: key, Value: []byte("v"), Expiration: 300}); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// memcachedOps are Memcached's own counts of the commands it served,
// read apart from herdbench's reader on a connection of the test's.
func memcachedOps(t *testing.T, addr string) int64 {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("stats\r\n")); err != nil {
		t.Fatal(err)
	}
	var n int64
	for r := bufio.NewReader(conn); ; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line = strings.TrimSpace(line); line == "END" {
			return n
		}
		f := strings.Fields(line)
		if len(f) == 3 && (strings.HasPrefix(f[1], "cmd_") && f[1] != "cmd_flush" ||
			strings.HasSuffix(f[1], "_hits") && !strings.HasPrefix(f[1], "get_") && !strings.HasPrefix(f[1], "touch_") ||
			strings.HasSuffix(f[1], "_misses") && !strings.HasPrefix(f[1], "get_") && !strings.HasPrefix(f[1], "touch_") || f[1] == "cas_badval") {
			v, _ := strconv.ParseInt(f[2], 10, 64)
			n += v
		}
	}
}

// lbHeld is what HAProxy's own stats page says it holds: its backend's
// sessions and the requests in its queues.
func lbHeld(t *testing.T, stats string) int64 {
	t.Helper()
	page := cachetest.HAProxyPage(t, stats)
	var n int64
	for _, row := range page {
		n += row["qcur"]
	}
	return n + page["BACKEND"]["scur"]
}

// A service on Memcached behind HAProxy, with no database: the arm's
// requests are held from its before window to the load's end, when the
// test reads HAProxy's stats page and Memcached's stats itself and lets
// them go on. Before, the arm ended there with them in flight; now the
// drain waits until HAProxy holds no session and Memcached's commands
// stop: at the run's end nothing is in flight, timing.drain.lb_sessions
// is what HAProxy's page held at the load's end and
// timing.drain.cache_commands what Memcached counted from then.
func TestADrainWaitsOnTheLoadBalancerAndTheCache(t *testing.T) {
	t.Parallel()
	mcAddr := storetest.Memcached(t)
	shop := &gatedShop{mc: memcache.New(mcAddr), gate: make(chan struct{})}
	shop.mc.MaxIdleConns = 100
	t.Cleanup(func() { shop.mc.Close() })
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	base, stats := cachetest.HAProxy(t, []string{strings.TrimPrefix(srv.URL, "http://")}, 0)
	svc := openService(t, fmt.Sprintf(`name: a shop on Memcached behind HAProxy
endpoints: [%q]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 20}, hot: 20}
memcached: {address: %q, key: "item:{key}"}
haproxy: {stats: %q, backend: api}
`, base, mcAddr, stats), nil)
	localtest.Measures(t)

	var mu sync.Mutex
	heldAtEnd, opsAtEnd := int64(-1), int64(-1)
	progress := func(pr Progress) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case pr.Phase == PhaseBefore:
			shop.held.Store(true)
		case pr.Phase == PhaseDrain && heldAtEnd < 0:
			heldAtEnd, opsAtEnd = lbHeld(t, stats), memcachedOps(t, mcAddr)
			shop.held.Store(false)
			close(shop.gate)
		}
	}
	p := servicePlan("expire", arm.Arm{Name: "baseline", Select: &arm.Select{}})
	p.Rate, p.Clients, p.Timeout, p.After = 40, 10, herd.Duration(100*time.Millisecond), herd.Duration(time.Second)
	rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Arms[0]
	w := a.Timing.Drain
	if w == nil || w.LBMS == nil || w.CacheMS == nil || w.LBSessions == nil || w.CacheCommands == nil {
		t.Fatalf("timing.drain = %+v; want the load balancer's and the cache's waits and holdings", w)
	}
	t.Logf("drain %d ms: lb %d ms (%d sessions), cache %d ms (%d commands), held by %s; HAProxy held %d at the load's end",
		a.Timing.DrainMS, *w.LBMS, *w.LBSessions, *w.CacheMS, *w.CacheCommands, w.HeldBy, heldAtEnd)
	if heldAtEnd < 10 {
		t.Fatalf("HAProxy held %d sessions at the load's end; want the arm's held requests (about 80), in flight", heldAtEnd)
	}
	if n := shop.inFlight.Load(); n != 0 || lbHeld(t, stats) != 0 {
		t.Errorf("at the run's end: %d requests in the service, %d in HAProxy; want none: the drain waits for them", n, lbHeld(t, stats))
	}
	if *w.LBSessions != heldAtEnd {
		t.Errorf("timing.drain.lb_sessions = %d; HAProxy's page said %d at the load's end: want them equal", *w.LBSessions, heldAtEnd)
	}
	if grew := memcachedOps(t, mcAddr) - opsAtEnd; *w.CacheCommands != grew || grew < heldAtEnd {
		t.Errorf("timing.drain.cache_commands = %d; Memcached counted %d from the load's end: want them equal, at least one a held request (%d)",
			*w.CacheCommands, grew, heldAtEnd)
	}
	if a.Timing.DrainTimedOut || *w.LBMS <= 0 || *w.CacheMS <= 0 || max(*w.LBMS, *w.CacheMS) > a.Timing.DrainMS ||
		(w.HeldBy != "lb" && w.HeldBy != "cache") {
		t.Errorf("timing: %+v, drain %+v; want a drain that ended, each source waited on within it, held by lb or cache", a.Timing, w)
	}
}
