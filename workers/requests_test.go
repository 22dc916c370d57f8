package workers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// A target file of two request classes (three to one) run from three
// worker processes: the arm has each class's figures (requests.CLASS.*),
// as from one machine. They add up to the arm's requests; each class's
// share is its weight's (within one a worker: a request never sent has
// no class, and two sent at once may swap theirs); and the bystander's 503s (one in five of its requests,
// counted by the service itself) are its own, shed (503): its ok answers are the
// service's 200s to it, the herd's class all ok.
func TestWorkersSendATargetsRequestClasses(t *testing.T) {
	localtest.Require(t)
	var browsed, browseOK atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vegeta-Seq") == "" || !strings.HasPrefix(r.URL.Path, "/browse") {
			return // the herd's class, and the burst: all ok
		}
		if browsed.Add(1)%5 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		browseOK.Add(1)
	}))
	defer srv.Close()
	dir := t.TempDir()
	target := filepath.Join(dir, "shop.yaml")
	yaml := fmt.Sprintf(`endpoints: [%s]
keys: {range: {from: 1, to: 100}, hot: 5}
requests:
  - {name: items, weight: 3, path: "/items/{key}"}
  - {name: browse, weight: 1, path: /browse}
`, srv.URL)
	if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := startWorkers(t, 3)
	rep, _ := stampede(t, ws, "--target", target, "--trigger", "burst", "--burst", "3", "--arms", "baseline",
		"--rate", "200", "--warmup", "0s", "--before", "1s", "--after", "1s")
	a := rep.Arms[0]
	items, browse := a.Requests["items"], a.Requests["browse"]
	if items == nil || browse == nil {
		t.Fatalf("requests %v; want items and browse", a.Requests)
	}
	t.Logf("items %d requests, %d ok; browse %d requests, %d ok; the service answered browse %d times, %d ok",
		items.Requests, items.OK, browse.Requests, browse.OK, browsed.Load(), browseOK.Load())
	if items.Requests+browse.Requests != a.HTTP.Requests || browse.Requests < a.HTTP.Requests/4-3 || browse.Requests > a.HTTP.Requests/4+3 {
		t.Errorf("classes' requests %d + %d; want the arm's %d, a quarter browse's within 3", items.Requests, browse.Requests, a.HTTP.Requests)
	}
	if items.OK != items.Requests || browse.OK == browse.Requests || browse.OK > browseOK.Load() || browse.Errors.Shed != browse.Requests-browse.OK {
		t.Errorf("items %d ok of %d, browse %d ok of %d (%d shed), the service's browse 200s %d over the whole arm; want items all ok, browse's 503s its own",
			items.OK, items.Requests, browse.OK, browse.Requests, browse.Errors.Shed, browseOK.Load())
	}
}
