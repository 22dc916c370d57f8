package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// A target file's request template: the key in the path, a query value
// and a header; the target's and the arm's headers and query values on
// every request; and the herd's own request id never reaching the service.
func TestRequestTemplate(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
	}))
	defer srv.Close()
	keys := []string{"a/b", "c d", "e"}
	c := Config{Targets: []string{srv.URL + "/"}, Rate: 100, Duration: 300 * time.Millisecond, Timeout: time.Second, Seed: 1,
		Source:  NewListKeys(keys, 1),
		Request: Request{Method: http.MethodPost, Path: "/v1/things/{key}", Query: map[string]string{"id": "{key}"}, Headers: map[string]string{"X-Key": "k-{key}"}},
		Header:  http.Header{"Authorization": []string{"Bearer s3cret"}},
		Query:   url.Values{"arm": []string{"lock"}},
	}
	var recs collect
	if _, err := Attack(context.Background(), c, recs.add); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || len(seen) != len(recs.recs) {
		t.Fatalf("the server saw %d requests, the client recorded %d", len(seen), len(recs.recs))
	}
	for _, r := range recs.recs {
		if r.Attempts != 1 || r.Outcome != OK {
			t.Errorf("record %d: %d attempts, %v; want 1, ok (the request's id found its attempts)", r.Seq, r.Attempts, r.Outcome)
		}
	}
	for _, r := range seen {
		key := r.URL.Query().Get("id")
		if !slices.Contains(keys, key) || r.Method != http.MethodPost || r.URL.Path != "/v1/things/"+key ||
			r.Header.Get("X-Key") != "k-"+key || r.Header.Get("Authorization") != "Bearer s3cret" || r.URL.Query().Get("arm") != "lock" {
			t.Fatalf("request %s %s %v; want POST /v1/things/KEY?id=KEY&arm=lock with X-Key k-KEY and the Authorization header", r.Method, r.URL, r.Header)
		}
	}
}

// A redirect is the answer, not a hop: the load never reaches a host the
// plan did not name, nor sends it the plan's headers.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/login", http.StatusFound))
	defer srv.Close()
	var recs collect
	_, err := Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: 100, Duration: 200 * time.Millisecond,
		Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second, Header: http.Header{"Authorization": []string{"Bearer s3cret"}}}, recs.add)
	if err != nil {
		t.Fatal(err)
	}
	if elsewhere.Load() != 0 {
		t.Errorf("the redirect's target received %d requests; want none", elsewhere.Load())
	}
	for _, r := range recs.recs {
		if r.Outcome != Other || r.Code != http.StatusFound {
			t.Fatalf("request %d: %v, %d; want the redirect as the answer (other, 302)", r.Seq, r.Outcome, r.Code)
		}
	}
}

// urlFunc, the targeter's prepared URL, makes the same URL as Request.URL.
func TestURLFunc(t *testing.T) {
	extra := url.Values{"arm": []string{"lock"}, "b": []string{"1", "2"}}
	for _, r := range []Request{
		{},
		{Path: "/v1/things/{key}/x"},
		{Path: "/static"},
		{Path: "/a/{key}/{key}"},
		{Query: map[string]string{"id": "{key}"}},
		{Path: "/p/{key}", Query: map[string]string{"z": "fixed", "a": "v w"}},
		{Headers: map[string]string{"X-Key": "{key}"}},
	} {
		for _, base := range []string{"http://h:1", "http://h:1/", "http://h:1/api/"} {
			for _, key := range []string{"1", "a/b", "c d", "é?"} {
				for _, q := range []url.Values{nil, extra} {
					if got, want := r.urlFunc(base, q)(key), r.URL(base, key, q); got != want {
						t.Errorf("%+v.urlFunc(%q, %v)(%q) = %q; want %q", r, base, q, key, got, want)
					}
				}
			}
		}
	}
}

// A record is critical exactly when its request carried X-Priority.
func TestCriticalRecorded(t *testing.T) {
	localtest.Measures(t)
	var marked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(criticalHeader) == "critical" {
			marked.Add(1)
		}
	}))
	defer srv.Close()
	c := Config{Targets: []string{srv.URL}, Rate: 200, Duration: time.Second, Keys: 100, Zipf: 1.1, Seed: 1,
		Timeout: 5 * time.Second, Critical: 0.3}
	var got collect
	if _, err := Attack(context.Background(), c, got.add); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range got.recs {
		if r.Critical {
			n++
		}
	}
	if int64(n) != marked.Load() || n < 40 || n > 80 {
		t.Errorf("%d of %d records critical, the server saw %d marked; want the same, about 30%%", n, len(got.recs), marked.Load())
	}
}

// A critical request the client refuses itself (its breaker open) is still
// counted critical.
func TestCriticalRefused(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	b, err := retry.ParseBreaker("1:10s")
	if err != nil {
		t.Fatal(err)
	}
	var got collect
	if _, err := Attack(context.Background(), Config{Targets: []string{srv.URL}, Rate: 100, Duration: 300 * time.Millisecond,
		Keys: 10, Zipf: 1.1, Seed: 1, Timeout: time.Second, Breaker: b, Critical: 1}, got.add); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range got.recs {
		if !r.Critical {
			t.Errorf("record %d (%v): Critical = false; want true, every request is", r.Seq, r.Outcome)
		}
		if r.Outcome == BreakerOpen {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("no request refused by the open breaker among %d; want most", len(got.recs))
	}
}
