package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// vegetaCLI builds vegeta's CLI at the version go.mod pins, from the Go
// module proxy, as bench/vsvegeta does.
func vegetaCLI(t *testing.T) string {
	t.Helper()
	version, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/tsenart/vegeta/v12").Output()
	if err != nil {
		t.Fatalf("vegeta's version in go.mod: %v", err)
	}
	dir := t.TempDir()
	install := exec.Command("go", "install", "github.com/tsenart/vegeta/v12@"+strings.TrimSpace(string(version)))
	install.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install vegeta's CLI: %v\n%s", err, out)
	}
	return filepath.Join(dir, "vegeta")
}

// -o vegeta=FILE writes a run's requests as vegeta's results: vegeta's own
// report reads the file, and finds the requests herdbench owed from T -
// before to the end (load.intended, and the timeline's rows summed) and
// the share of them that were answered ok, one in ten being a 503 here;
// its percentiles are herdbench's, from the intended send time.
func TestVegetaReportReadsARun(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// one in ten of the load's (vegeta numbers them), not the warm's
		if r.Header.Get("X-Vegeta-Seq") != "" && n.Add(1)%10 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	vegeta := vegetaCLI(t)
	dir := t.TempDir()
	results, jsonFile := filepath.Join(dir, "results.bin"), filepath.Join(dir, "results.json")
	code, _, stderr := herdbench(t, "stampede", "--target", srv.URL+"/items/{key}", "--trigger", "burst", "--burst", "1",
		"--rate", "200", "--warmup", "500ms", "--before", "1s", "--after", "1s", "--results-dir", dir,
		"-o", "vegeta="+results, "-o", "json="+jsonFile)
	if code != 0 && code != exitGatesFailed {
		t.Fatalf("stampede: exit %d\n%s", code, stderr)
	}
	out, err := exec.Command(vegeta, "report", "-type", "json", results).Output()
	if err != nil {
		t.Fatalf("vegeta report: %v", err)
	}
	var report struct {
		Requests  int64   `json:"requests"`
		Success   float64 `json:"success"`
		Latencies struct {
			P99 int64 `json:"99th"`
		} `json:"latencies"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("vegeta report: %v\n%s", err, out)
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Arms []struct {
			Load struct {
				Intended int64 `json:"intended"`
			} `json:"load"`
			Timeline []struct {
				Requests int64 `json:"requests"`
				OK       int64 `json:"ok"`
			} `json:"timeline"`
		} `json:"arms"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Arms) != 1 {
		t.Fatalf("results: %v (%d arms; want 1)", err, len(rep.Arms))
	}
	arm := rep.Arms[0]
	var requests, ok int64
	for _, row := range arm.Timeline {
		requests += row.Requests
		ok += row.OK
	}
	if report.Requests != arm.Load.Intended || report.Requests != requests {
		t.Errorf("vegeta report: %d requests; want %d, herdbench's load.intended (timeline: %d)", report.Requests, arm.Load.Intended, requests)
	}
	if want := float64(ok) / float64(requests); report.Success < want-1e-9 || report.Success > want+1e-9 {
		t.Errorf("vegeta report: success %.4f; want %.4f, herdbench's ok (%d) over its requests (%d)", report.Success, want, ok, requests)
	}
	if report.Success > 0.95 || report.Success < 0.85 {
		t.Errorf("vegeta report: success %.4f; want about 0.9: the server answers one request in ten 503", report.Success)
	}
	if report.Latencies.P99 <= 0 {
		t.Errorf("vegeta report: p99 %d ns; want the requests' latencies", report.Latencies.P99)
	}
}
