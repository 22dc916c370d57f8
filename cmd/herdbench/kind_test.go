package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/targets"
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

// tallyKind is the service as a third kind of subject, beside the testbed
// and a user's service, written as docs/architecture.md's recipe "Add a
// kind of subject" says: --target tally names it, its arms are
// --arms' names (none or singleflight), and it opens its target file's
// HTTP cache.
type tallyKind struct {
	tg  *targets.Target
	svc *tallyService
}

var _ plan.Kind = tallyKind{}

func (tallyKind) Plan(g plan.Given) (plan.Plan, herd.FieldErrors) { return g.Plan, nil }

func (tallyKind) Arms(p plan.Plan, g plan.Given) (plan.Plan, herd.FieldErrors) {
	p.Arms = arm.ClientKinds.Arms(g.Arms, nil)
	return p, nil
}

func (tallyKind) Problems(_ plan.Plan, _ plan.Given, bad herd.FieldErrors) herd.FieldErrors {
	return bad
}

func (k tallyKind) Describe() (*targets.Target, plan.Subject) { return k.tg, tallySubject{k.svc} }
func (k tallyKind) Hosts(_ plan.Plan, g plan.Given) error {
	return k.tg.CheckHosts(g.Allow)
}
func (k tallyKind) Local() string { return k.tg.Endpoints[0] }

func (k tallyKind) Open(ctx context.Context, _ plan.Plan, _ plan.Given) (plan.Opened, error) {
	if err := k.tg.Connect(ctx); err != nil {
		return plan.Opened{}, err
	}
	return plan.Opened{Target: k.tg, Subject: tallySubject{k.svc}, Close: k.tg.Close}, nil
}

// tallySubject is the service as an experiment's subject: an arm's
// strategy turns coalescing on or off, the fill caches every key, and the
// counters are the service's own.
type tallySubject struct{ svc *tallyService }

func (s tallySubject) Keep(context.Context) func() {
	was := s.svc.coalesce.Load()
	return func() { s.svc.coalesce.Store(was) }
}

func (s tallySubject) Apply(_ context.Context, arm arm.Arm, _ plan.ArmAt) (plan.Applied, error) {
	mode := arm.Knobs.Text("strategy")
	if mode != "none" && mode != "singleflight" {
		return plan.Applied{}, fmt.Errorf("arm %s: tally runs none or singleflight, not %q", arm.Name, mode)
	}
	s.svc.coalesce.Store(mode == "singleflight")
	cfg, _ := json.Marshal(map[string]string{"mode": mode})
	return plan.Applied{Arm: arm, Config: cfg, After: func(context.Context) error { return nil }}, nil
}

func (s tallySubject) Fill(_ context.Context, p plan.Plan, _ plan.Applied, _ triggers.Trigger, _ []string) (result.Warm, error) {
	s.svc.mu.Lock()
	defer s.svc.mu.Unlock()
	for k := 1; k <= p.Keys; k++ {
		s.svc.cache[fmt.Sprint(k)] = true
	}
	s.svc.loads.Store(0)
	s.svc.served.Store(0)
	return result.Warm{Keys: p.Keys}, nil
}

// The tally's own counters: what it served and loaded.
func init() { result.DeclareCounters(nil, "requests", "loads") }

func (s tallySubject) Counters(context.Context) (result.Counters, error) {
	return result.Counters{{Name: "requests", Value: s.svc.served.Load()}, {Name: "loads", Value: s.svc.loads.Load()}}, nil
}

func (s tallySubject) Drain(ctx context.Context) (*result.DrainWaits, error) {
	for s.svc.busy.Load() > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond): // polling, bounded by ctx
		}
	}
	return nil, nil
}

func (tallySubject) FillPlan(p plan.Plan, _ []string) string {
	return fmt.Sprintf("cache keys 1 to %d in tally", p.Keys)
}

func (tallySubject) FillRequests(plan.Plan, []string) int64 { return 0 }

// A kind of subject cmd has never seen, added in this file: --target tally
// resolves to it, and stampede's one prepare path dry-runs it and runs a
// real stampede on it, its arms applied by it, its own counters in the
// results (api.loads is the backend's count), and coalescing cuts the herd
// the purge at T sets off.
func TestAThirdKindOfSubjectRunsThroughTheSharedPath(t *testing.T) {
	svc := &tallyService{cache: map[string]bool{}, inflight: map[string]chan struct{}{}}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "tally.yaml")
	y := fmt.Sprintf("name: tally\nendpoints: [%q]\nrequest: {path: \"/items/{key}\"}\nkeys: {zipf: {from: 1, to: 200, s: 1.1}, hot: 20}\nhttp_cache: {purge: {method: PURGE, path: \"/items/{key}\"}}\n", srv.URL)
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := targets.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tally := func(_ context.Context, o stampedeOptions) (plan.Kind, error, error) {
		if o.Target != "tally" {
			return nil, nil, nil
		}
		return tallyKind{tg: targets.FromFile(f), svc: svc}, nil, nil
	}
	opts := func(dryRun bool) stampedeOptions {
		o := newStampedeOptions(io.Discard, triggers.Default)
		o.kinds = append([]kindOf{tally}, o.kinds...)
		o.Target, o.Arms, o.DryRun, o.ResultsDir = "tally", []string{"none", "singleflight"}, dryRun, t.TempDir()
		p := &o.Plan
		p.HotKeys, p.Keys, p.Rate, p.Clients, p.Seed = 20, 200, 300, 20, 11
		p.Warmup, p.Before, p.After = herd.Duration(300*time.Millisecond), herd.Duration(time.Second), herd.Duration(2*time.Second)
		return o
	}
	var dry bytes.Buffer
	if err := stampedeRun(context.Background(), &dry, io.Discard, opts(true)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dry.String(), "cache keys 1 to 200 in tally") || !strings.Contains(dry.String(), "singleflight") {
		t.Errorf("dry run:\n%s\nwant the kind's fill plan and both arms", dry.String())
	}
	o := opts(false)
	if err := stampedeRun(context.Background(), io.Discard, io.Discard, o); err != nil {
		t.Fatal(err)
	}
	saved, _ := filepath.Glob(filepath.Join(o.ResultsDir, "*", "results.json"))
	if len(saved) != 1 {
		t.Fatalf("results %v; want one results.json", saved)
	}
	rep, err := reporters.ReadJSONFile(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Arms) != 2 {
		t.Fatalf("%d arms; want 2", len(rep.Arms))
	}
	none, sf := rep.Arms[0], rep.Arms[1]
	for _, a := range rep.Arms {
		var cfg struct{ Mode string }
		if err := json.Unmarshal(a.Config, &cfg); err != nil || a.API == nil || a.API.Value("requests") == 0 || cfg.Mode != a.Name {
			t.Errorf("arm %s: api %+v, config %s; want the backend's own loads, its requests, and the mode the subject applied", a.Name, a.API, a.Config)
		}
	}
	if none.API == nil || sf.API == nil || sf.API.Value("loads") >= none.API.Value("loads") || sf.API.Value("loads") < 20 {
		t.Errorf("loads: none %+v, singleflight %+v; want singleflight's fewer, and at least the 20 purged keys reloaded", none.API, sf.API)
	}
	t.Logf("tally: none %d loads, singleflight %d, after purging 20 hot keys at T", none.API.Value("loads"), sf.API.Value("loads"))
}
