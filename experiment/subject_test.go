package experiment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/triggers"
)

// tallyService is a throwaway service in this process: an item cache in
// front of a slow backend, whose loads it counts, purged by PURGE (as an
// nginx or Varnish in front of a service is); with coalescing on, the
// requests that miss on one key share one load.
type tallyService struct {
	mu       sync.Mutex
	cache    map[string]bool
	inflight map[string]chan struct{}
	coalesce atomic.Bool
	loads    atomic.Int64 // the backend's own count of its work
	served   atomic.Int64
	busy     atomic.Int64
}

func (s *tallyService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/items/")
	if r.Method == "PURGE" {
		s.mu.Lock()
		delete(s.cache, key)
		s.mu.Unlock()
		return
	}
	s.busy.Add(1)
	defer s.busy.Add(-1)
	defer s.served.Add(1)
	s.mu.Lock()
	if s.cache[key] {
		s.mu.Unlock()
		return
	}
	if ch, ok := s.inflight[key]; ok && s.coalesce.Load() {
		s.mu.Unlock()
		<-ch // another request loads it
		return
	}
	ch := make(chan struct{})
	s.inflight[key] = ch
	s.mu.Unlock()
	time.Sleep(100 * time.Millisecond) // the backend's work
	s.loads.Add(1)
	s.mu.Lock()
	s.cache[key] = true
	if s.inflight[key] == ch {
		delete(s.inflight, key)
	}
	s.mu.Unlock()
	close(ch)
}

// tallySubject is the service as an experiment's subject, written the way
// a kind of subject is (docs/architecture.md, "Recipe: add a kind of
// subject"): an arm's strategy turns coalescing on or off, the fill
// caches every key, and the counters are the service's own.
type tallySubject struct{ svc *tallyService }

func (s tallySubject) Keep(context.Context) func() {
	was := s.svc.coalesce.Load()
	return func() { s.svc.coalesce.Store(was) }
}

func (s tallySubject) Apply(_ context.Context, arm Arm) (Applied, error) {
	mode := arm.Knobs.Text("strategy")
	if mode != "none" && mode != "singleflight" {
		return Applied{}, fmt.Errorf("arm %s: tally runs none or singleflight, not %q", arm.Name, mode)
	}
	s.svc.coalesce.Store(mode == "singleflight")
	cfg, _ := json.Marshal(map[string]string{"mode": mode})
	return Applied{Arm: arm, Config: cfg, After: func(context.Context) error { return nil }}, nil
}

func (s tallySubject) Fill(_ context.Context, p Plan, _ Applied, _ triggers.Trigger, _ []string) (Warm, error) {
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	for k := 1; k <= p.Keys; k++ {
		s.svc.cache[fmt.Sprint(k)] = true
	}
	s.svc.loads.Store(0)
	s.svc.served.Store(0)
	return Warm{Keys: p.Keys}, nil
}

func (s tallySubject) Counters(context.Context) (*APICounters, error) {
	return &APICounters{Requests: s.svc.served.Load(), Loads: s.svc.loads.Load()}, nil
}

func (s tallySubject) Drain(ctx context.Context) error {
	for s.svc.busy.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond): // polling, bounded by ctx
		}
	}
	return nil
}

func (tallySubject) FillPlan(p Plan, _ []string) string {
	return fmt.Sprintf("cache keys 1 to %d in tally", p.Keys)
}

func (tallySubject) FillRequests(Plan, []string) int64 { return 0 }

// A kind of subject the engine has never seen, added in a test file: a
// real stampede runs on it through experiment.Run, its arms applied by it,
// its own counters in the results (api.loads is the backend's count, arm
// by arm), and coalescing cuts the herd the purge at T sets off.
func TestAThrowawaySubjectRunsAStampede(t *testing.T) {
	svc := &tallyService{cache: map[string]bool{}, inflight: map[string]chan struct{}{}}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	tg := openService(t, fmt.Sprintf(`name: tally
endpoints: [%q]
request: {path: "/items/{key}"}
keys: {zipf: {from: 1, to: 200, s: 1.1}, hot: 20}
http_cache: {purge: {method: PURGE, path: "/items/{key}"}}
`, srv.URL), nil)
	p := Plan{Arms: ClientKinds.Arms([]string{"none", "singleflight"}, nil), Trigger: "expire", HotKeys: 20, Keys: 200, Zipf: 1.1,
		Rate: 300, Clients: 20, Timeout: herd.Duration(time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second), Seed: 11}
	var backend []int64
	obs := loadsAtEnd{svc: svc, loads: &backend}
	rep, err := Run(context.Background(), p, Env{Target: tg, Subject: tallySubject{svc}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Arms) != 2 || len(backend) != 2 {
		t.Fatalf("%d arms, %d backend counts; want 2 of each", len(rep.Arms), len(backend))
	}
	none, sf := rep.Arms[0], rep.Arms[1]
	for i, a := range rep.Arms {
		if a.API == nil || a.API.Loads != backend[i] || a.API.Requests == 0 || string(a.Config) != fmt.Sprintf(`{"mode":%q}`, a.Name) {
			t.Errorf("arm %s: api %+v, config %s; want the backend's own %d loads, its requests, and the mode the subject applied", a.Name, a.API, a.Config, backend[i])
		}
		if a.DB != nil || a.Cache != nil {
			t.Errorf("arm %s: db %+v, cache %+v; want none: the target declares neither", a.Name, a.DB, a.Cache)
		}
	}
	if none.API == nil || sf.API == nil || sf.API.Loads >= none.API.Loads || sf.API.Loads < 20 {
		t.Errorf("loads: none %+v, singleflight %+v; want singleflight's fewer, and at least the 20 purged keys reloaded", none.API, sf.API)
	}
	t.Logf("tally: none %d loads, singleflight %d, after purging 20 hot keys at T", none.API.Loads, sf.API.Loads)
}

// loadsAtEnd notes the backend's own count of its loads as each arm ends,
// for the results' api.loads to be compared with.
type loadsAtEnd struct {
	svc   *tallyService
	loads *[]int64
}

func (loadsAtEnd) Request(string, string, load.Record) {}
func (loadsAtEnd) Trigger(string, time.Time)           {}
func (o loadsAtEnd) Arm(_ string, running bool) {
	if !running {
		*o.loads = append(*o.loads, o.svc.loads.Load())
	}
}
