package cachetest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// origin counts the requests it answers, per path: a cache's background
// fetch of another path (grace's refresh) is not counted against this one.
func origin(t *testing.T) (string, func(path string) int64) {
	var mu sync.Mutex
	n := map[string]int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n[r.URL.Path]++
		c := n[r.URL.Path]
		mu.Unlock()
		fmt.Fprintf(w, "item %s %d", r.URL.Path, c)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), func(path string) int64 {
		mu.Lock()
		defer mu.Unlock()
		return n[path]
	}
}

func do(t *testing.T, method, url string, header ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

// nginx caches, keeps each arm's entries apart, and its purge answers 200
// for an entry it held and 404 for one it did not.
func TestNginxCachesAndPurges(t *testing.T) {
	addr, n := origin(t)
	base := Nginx(t, []string{addr}, time.Minute)
	for _, arm := range []string{"", "lock", "stale"} {
		before := n("/items/7")
		do(t, "GET", base+"/items/7", "X-Arm", arm)
		_, h := do(t, "GET", base+"/items/7", "X-Arm", arm)
		if n("/items/7") != before+1 || h.Get("X-Cache-Status") != "HIT" {
			t.Errorf("arm %q: origin asked %d times, second answer %q; want one fetch, then a HIT", arm, n("/items/7")-before, h.Get("X-Cache-Status"))
		}
		if s, _ := do(t, "GET", base+"/purge/items/7", "X-Arm", arm); s != 200 {
			t.Errorf("arm %q: PURGE of a cached entry answered %d; want 200", arm, s)
		}
		if s, _ := do(t, "GET", base+"/purge/items/7", "X-Arm", arm); s != 404 {
			t.Errorf("arm %q: PURGE of an entry already gone answered %d; want 404", arm, s)
		}
		if _, h := do(t, "GET", base+"/items/7", "X-Arm", arm); h.Get("X-Cache-Status") != "MISS" || n("/items/7") != before+2 {
			t.Errorf("arm %q: after the purge %q, origin asked %d times; want a MISS that fetched again", arm, h.Get("X-Cache-Status"), n("/items/7")-before)
		}
	}
}

// Varnish caches per arm; a hard purge removes, a soft one expires (grace
// then serves the stale object), BAN removes every object it matches.
func TestVarnishCachesPurgesAndBans(t *testing.T) {
	addr, n := origin(t)
	base := Varnish(t, []string{addr}, time.Minute)
	do(t, "GET", base+"/items/1", "X-Arm", "coalesce")
	if _, h := do(t, "GET", base+"/items/1", "X-Arm", "coalesce"); h.Get("X-Cache") != "HIT" || n("/items/1") != 1 {
		t.Fatalf("second GET %q after %d fetches; want a HIT after one", h.Get("X-Cache"), n("/items/1"))
	}
	if s, _ := do(t, "PURGE", base+"/items/1", "X-Arm", "coalesce"); s != 200 {
		t.Errorf("PURGE of a cached object = %d; want 200", s)
	}
	// (a second purge of the same object may still count it while
	// Varnish retires it, and answer 200: a key never cached answers 404)
	if s, _ := do(t, "PURGE", base+"/items/99", "X-Arm", "coalesce"); s != 404 {
		t.Errorf("PURGE of an object never cached = %d; want 404", s)
	}
	// grace: a soft purge leaves the object to be served while it refreshes
	do(t, "GET", base+"/items/2", "X-Arm", "grace")
	if s, _ := do(t, "PURGE", base+"/items/2", "X-Arm", "grace", "X-Purge", "soft"); s != 200 {
		t.Errorf("soft PURGE = %d; want 200", s)
	}
	if _, h := do(t, "GET", base+"/items/2", "X-Arm", "grace"); h.Get("X-Cache") != "HIT" {
		t.Errorf("GET after a soft purge under grace: %q; want the stale object, a HIT", h.Get("X-Cache"))
	}
	// BAN: every object under /items/ goes
	do(t, "GET", base+"/items/3", "X-Arm", "coalesce")
	if s, _ := do(t, "BAN", base+"/", "X-Ban-Url", "^/items/"); s != 200 {
		t.Errorf("BAN = %d; want 200", s)
	}
	if _, h := do(t, "GET", base+"/items/3", "X-Arm", "coalesce"); h.Get("X-Cache") != "MISS" || n("/items/3") != 2 {
		t.Errorf("GET after BAN: %q, origin asked %d times for it; want a MISS that fetched again (2)", h.Get("X-Cache"), n("/items/3"))
	}
}
