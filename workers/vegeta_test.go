package workers_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// -o vegeta=FILE with workers: each worker streams what vegeta's results
// hold of its requests (method, URL, error), so the controller writes
// every request of the arm, whichever worker sent it, as one client would:
// as many results as the arm intended, each with its URL and method, the
// 503s (one in ten here) with vegeta's error text, and the ok share
// herdbench's own.
func TestWorkersWriteVegetaResults(t *testing.T) {
	localtest.Require(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vegeta-Seq") != "" && n.Add(1)%10 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ws := startWorkers(t, 2)
	file := filepath.Join(t.TempDir(), "results.bin")
	rep, _ := stampede(t, ws, "--target", srv.URL+"/items/{key}", "--trigger", "burst", "--burst", "2",
		"--rate", "200", "--warmup", "500ms", "--before", "1s", "--after", "1s", "-o", "vegeta="+file)
	a := rep.Arms[0]
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := vegeta.NewDecoder(f)
	var results, ok, failed int64
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode result %d: %v", results, err)
		}
		results++
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL, srv.URL+"/items/") || r.Attack != a.Name {
			t.Errorf("result %d: %s %s of attack %q; want GET %s/items/... of %q", r.Seq, r.Method, r.URL, r.Attack, srv.URL, a.Name)
		}
		switch {
		case r.Code == http.StatusOK:
			ok++
		case r.Code == http.StatusServiceUnavailable && r.Error != "":
			failed++
		default:
			t.Errorf("result %d: code %d, error %q; want 200, or 503 with its error", r.Seq, r.Code, r.Error)
		}
	}
	if results != a.Load.Intended {
		t.Errorf("%d vegeta results; want %d, the arm's load.intended", results, a.Load.Intended)
	}
	var timelineOK int64
	for _, row := range a.Timeline {
		timelineOK += row.OK
	}
	if ok != timelineOK || failed == 0 {
		t.Errorf("vegeta results: %d ok, %d failed; want %d ok as herdbench's timeline, and the 503s", ok, failed, timelineOK)
	}
}
