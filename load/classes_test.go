package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/retry"
)

// A mix of two classes: each hit is one class's request, the shares are
// the weights', a POST's body carries its key (and again on its retry),
// the class header never reaches the service, and each record names the
// class the service saw.
func TestAMixSendsEachClassItsShare(t *testing.T) {
	type seen struct{ method, path, body, classHeader string }
	var mu sync.Mutex
	var got []seen
	failedOnce := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{r.Method, r.URL.Path, string(b), r.Header.Get(classHeader)})
		if r.Method == http.MethodPost && !failedOnce[r.URL.Path] { // each like's first attempt fails: its retry must carry the body
			failedOnce[r.URL.Path] = true
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p, err := retry.Parse("immediate:1")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Targets: []string{srv.URL}, Rate: 400, Duration: 500 * time.Millisecond, Timeout: time.Second, Seed: 1, Keys: 50, Zipf: 1.1,
		Retry: p, Classes: []Class{
			{Name: "item", Weight: 3, Request: Request{Path: "/items/{key}"}},
			{Name: "like", Weight: 1, Request: Request{Method: http.MethodPost, Path: "/likes/{key}", Body: `{"item":"{key}"}`},
				Source: NewRangeKeys(1000, 1999, 2)},
		}}
	var recs collect
	if _, err := Attack(context.Background(), c, recs.add); err != nil {
		t.Fatal(err)
	}
	n := map[int]int{}
	for _, r := range recs.recs {
		n[r.Class]++
		want := map[int]string{0: "GET " + srv.URL + "/items/", 1: "POST " + srv.URL + "/likes/"}[r.Class]
		if !strings.HasPrefix(r.Method+" "+r.URL, want) || r.Outcome != OK {
			t.Fatalf("record of class %d: %s %s, %v; want %s…, ok", r.Class, r.Method, r.URL, r.Outcome, want)
		}
	}
	if total := n[0] + n[1]; total < 150 || n[1] < total/4-1 || n[1] > total/4+1 {
		t.Errorf("classes sent %v of %d; want a quarter likes (weights 3:1), to one request", n, total)
	}
	mu.Lock()
	defer mu.Unlock()
	likes := 0
	for _, s := range got {
		if s.classHeader != "" {
			t.Fatalf("%s %s carried %s: %q; want it taken off", s.method, s.path, classHeader, s.classHeader)
		}
		if s.method != http.MethodPost {
			continue
		}
		likes++
		if key := strings.TrimPrefix(s.path, "/likes/"); s.body != `{"item":"`+key+`"}` {
			t.Fatalf("POST %s had body %q; want its key in it, on every attempt", s.path, s.body)
		}
	}
	if likes <= n[1] {
		t.Errorf("the service saw %d like attempts for %d like requests; want each first attempt retried", likes, n[1])
	}
}

// The mixer gives each class its weight in every run of the weights'
// total, spread out.
func TestTheMixerIsSmooth(t *testing.T) {
	m := newMixer([]Class{{Weight: 5}, {Weight: 1}, {Weight: 1}}, 0, 1)
	var seq []int
	for range 14 {
		seq = append(seq, m.next())
	}
	for _, run := range [][]int{seq[:7], seq[7:]} {
		n := map[int]int{}
		for _, c := range run {
			n[c]++
		}
		if n[0] != 5 || n[1] != 1 || n[2] != 1 {
			t.Fatalf("a run of 7 hits had %v; want 5, 1, 1 (sequence %v)", n, seq)
		}
	}
	longest, run := 0, 0
	for _, c := range seq {
		if run = map[bool]int{true: run + 1, false: 0}[c == 0]; run > longest {
			longest = run
		}
	}
	if longest > 4 {
		t.Errorf("sequence %v holds %d of class 0 in a row; want them spread (at most 4; in blocks, 5)", seq, longest)
	}
}

func TestClassesAreValidated(t *testing.T) {
	c := Config{Targets: []string{"http://127.0.0.1:1"}, Rate: 1, Duration: time.Second, Timeout: time.Second, Keys: 1, Zipf: 1.1,
		Classes: []Class{{Name: "a", Weight: 1}, {Name: "a", Weight: 0}}}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), `name "a"`) || !strings.Contains(err.Error(), "weight 0") {
		t.Fatalf("Validate = %v; want the twice-named class and the weight of 0 named", err)
	}
}

// A class of vegeta targets: each hit the next target whole, its method,
// URL, headers and body as vegeta's file has them, with the arm's query
// and headers added.
func TestAClassOfVegetaTargets(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.Method+" "+r.URL.Path+" "+r.URL.Query().Get("arm")+" "+r.Header.Get("X-Tag")+" "+r.Header.Get("X-Arm")+" "+string(b)]++
		mu.Unlock()
	}))
	defer srv.Close()
	c := Config{Targets: []string{srv.URL}, Rate: 200, Duration: 300 * time.Millisecond, Timeout: time.Second, Seed: 1, Keys: 10, Zipf: 1.1,
		Header: http.Header{"X-Arm": []string{"lock"}}, Query: map[string][]string{"arm": {"lock"}},
		Classes: []Class{
			{Name: "items", Weight: 1, Request: Request{Path: "/items/{key}"}},
			{Name: "browse", Weight: 1, Targets: []vegeta.Target{
				{Method: "GET", URL: srv.URL + "/browse", Header: http.Header{"X-Tag": []string{"b"}}},
				{Method: "POST", URL: srv.URL + "/search", Body: []byte("q=hat")},
			}},
		}}
	var recs collect
	if _, err := Attack(context.Background(), c, recs.add); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	browse, search := seen["GET /browse lock b lock "], seen["POST /search lock  lock q=hat"]
	if browse == 0 || search == 0 || browse-search > 1 || search-browse > 1 {
		t.Errorf("the service saw %v; want /browse and /search in turn, with the arm's query and header", seen)
	}
	for _, r := range recs.recs {
		if r.Class == 1 && !strings.Contains(r.URL, "/browse") && !strings.Contains(r.URL, "/search") {
			t.Errorf("a browse record went to %s", r.URL)
		}
	}
}

// Three stripes' mixers, each taking its stripe's hits, pick together the
// sequence one mixer picks for the whole schedule: hit k of the schedule
// is stripe k mod 3's (k div 3)-th, and its class is the same.
func TestStripesMixAsOneSchedule(t *testing.T) {
	cs := []Class{{Weight: 5}, {Weight: 2}, {Weight: 1}}
	one := newMixer(cs, 0, 1)
	stripes := []*mixer{newMixer(cs, 0, 3), newMixer(cs, 1, 3), newMixer(cs, 2, 3)}
	for k := range 100 {
		if got, want := stripes[k%3].next(), one.next(); got != want {
			t.Fatalf("hit %d: stripe %d picks class %d; want %d, the whole schedule's", k, k%3, got, want)
		}
	}
}
