package workers_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/herdbench/herdbench/workers"
)

// A client with the token follows no redirect: a worker's address that
// answers 302 to another host gets its answer back, and the other host
// never sees the token.
func TestTheTokenFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the redirect's host got Authorization %q", r.Header.Get("Authorization"))
		}
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer 0123456789abcdef" {
			t.Errorf("the worker's address got Authorization %q; want the token", r.Header.Get("Authorization"))
		}
		http.Redirect(w, r, other.URL+"/v1/clock", http.StatusFound)
	}))
	defer redirecting.Close()
	c := workers.WithToken(&http.Client{}, "0123456789abcdef")
	resp, err := c.Get(redirecting.URL + "/v1/clock")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || reached.Load() != 0 {
		t.Errorf("GET through a redirect = %d, the other host reached %d times; want the 302 itself, the other host never", resp.StatusCode, reached.Load())
	}
}
