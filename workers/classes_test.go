package workers

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// A target of two request classes, three to one, sent by three workers
// (real HTTP servers on loopback): each worker sends the classes' mix on
// its stripe, and its bins carry each class's own counts and histograms,
// so the arm's recorder, merged from the bins, has the per-class figures
// one recorder fed every request would have (every count, row and
// histogram of each class), the bystander's 503s (one in five) its own;
// each class's share of the requests is its weight's (a request never
// sent has no class: within one a worker).
func TestBinsCarryEachRequestClass(t *testing.T) {
	var browsed atomic.Int64
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/browse") && browsed.Add(1)%5 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	one := struct {
		sync.Mutex
		recs []load.Record
	}{}
	var urls []string
	for range 3 {
		w := NewWorker("test", nil, "")
		w.tap = func(r load.Record) {
			one.Lock()
			one.recs = append(one.recs, r)
			one.Unlock()
		}
		urls = append(urls, serve(t, w.Handler()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const rate, before, after = 300, time.Second, 2 * time.Second
	classes := []targets.Class{{Name: "items", Weight: 3, Herd: true, Request: load.Request{Path: "/items/{key}"}},
		{Name: "browse", Weight: 1, Request: load.Request{Path: "/browse"}}}
	job := experiment.Job{Arm: "none", Before: before, After: after, Classes: classes, Load: load.Config{Targets: []string{target},
		Rate: rate, Duration: before + after, Keys: 100, Zipf: 1.1, Timeout: time.Second}}
	p, err := NewController(urls, "test", nil, "").Prepare(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(p.Lead())
	tt := start.Add(before)
	rec := experiment.NewRecorder(tt, before, after, false)
	rec.FileClasses(len(classes))
	if _, err := p.Run(ctx, start, tt, rec, nil); err != nil {
		t.Fatal(err) // Run holds the bins to the workers' own recorders, classes included
	}
	whole := experiment.NewRecorder(tt, before, after, false)
	whole.FileClasses(len(classes))
	for _, r := range one.recs {
		whole.Add(r)
	}
	if err := rec.SameCounts(whole); err != nil {
		t.Errorf("the arm's recorder against one fed every record: %v", err)
	}
	st := rec.State()
	if len(st.Classes) != 2 {
		t.Fatalf("%d classes merged; want 2", len(st.Classes))
	}
	var n [2]int64
	for i, c := range st.Classes {
		var ok int64
		for _, row := range c.Rows {
			n[i] += row.Requests
			ok += row.OK
		}
		t.Logf("%s: %d requests, %d ok", classes[i].Name, n[i], ok)
		if i == 1 && (ok == n[i] || ok < n[i]*3/4) {
			t.Errorf("browse: %d ok of %d; want the 503s, one in five, its own", ok, n[i])
		}
		if i == 0 && ok != n[i] {
			t.Errorf("items: %d ok of %d; want every one", ok, n[i])
		}
	}
	if all := n[0] + n[1]; all != st.Intended || n[1] < all/4-3 || n[1] > all/4+3 {
		t.Errorf("classes' requests %d + %d; want the arm's %d, a quarter of them browse's within 3", n[0], n[1], st.Intended)
	}
}

// A worker refuses a class of vegeta targets whose whole URLs leave
// loopback for a host it was not allowed, as it refuses such an endpoint;
// allowed on both sides (the worker's --allow-host, the controller's
// checked target), it takes it.
func TestAWorkerChecksAClassesVegetaTargets(t *testing.T) {
	classes := []targets.Class{{Name: "items", Weight: 1}, {Name: "browse", Weight: 1, Vegeta: []vegeta.Target{{Method: "GET", URL: "http://10.0.0.9:8080/browse"}}}}
	s := Share{Load: load.Config{Targets: []string{"http://127.0.0.1:8080"}}, Classes: classes}
	if err := NewWorker("test", nil, "").check(s); err == nil || !strings.Contains(err.Error(), "host 10.0.0.9 is not loopback and not allowed on this worker") {
		t.Errorf("check(a class's vegeta target on 10.0.0.9) = %v; want it refused, naming the host", err)
	}
	s.Hosts = []string{"10.0.0.9"}
	if err := NewWorker("test", []string{"10.0.0.9"}, "").check(s); err != nil {
		t.Errorf("check(the same, allowed on both sides) = %v; want nil", err)
	}
}
