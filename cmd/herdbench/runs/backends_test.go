package runs

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/cachetest"
)

// Two arms on two backends of one HAProxy: arm a's endpoints reach the
// frontend whose backend is the file's (api), arm b's the other's, which
// it names (arms[].backend: other). Each arm's lb.* are its own
// backend's: its servers are the ones HAProxy lists under that backend,
// its lb.requests the clients' own from T, and every request its backend
// received (req_tot, on the page read apart after the run: no other arm
// sent it any) the clients' attempts and the warm-up's, of which
// lb.requests are the part from T. A backend HAProxy does not list is
// refused at its line, with the ones it does.
func TestArmsReadTheirOwnBackends(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	var origins [2][]string
	for i := range origins {
		for range 2 {
			o := httptest.NewServer(ok)
			t.Cleanup(o.Close)
			origins[i] = append(origins[i], strings.TrimPrefix(o.URL, "http://"))
		}
	}
	base, otherBase, stats := cachetest.HAProxyTwoBackends(t, origins[0], origins[1])
	dir := t.TempDir()
	file := func(backend string) string {
		target := filepath.Join(dir, backend+".yaml")
		yaml := fmt.Sprintf(`endpoints: [%s]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 100}, hot: 5}
haproxy: {stats: %q, backend: api}
arms:
  - name: a
  - name: b
    endpoints: [%s]
    backend: %s
`, base, stats, otherBase, backend)
		if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return target
	}
	stampede := func(target string, more ...string) (int, string) {
		code, stdout, stderr := clitest.Run(t, nil, append([]string{"stampede", "--target", target, "--trigger", "command", "--run", "true", "--command-timeout", "1s",
			"--rate", "100", "--warmup", "0s", "--before", "1s", "--after", "2s", "--seed", "5", "--state-dir", t.TempDir()}, more...)...)
		return code, stdout + stderr
	}
	// a backend the page does not list: refused before any load, at its line
	code, out := stampede(file("nosuch"), "--results-dir", t.TempDir())
	want := fmt.Sprintf(`nosuch.yaml:9: arms[1].backend: "nosuch" is not a backend of HAProxy's stats page %s (accepted: api, other)`, stats)
	if code != clitest.ExitUsage || !strings.Contains(out, want) {
		t.Fatalf("stampede with arms[1].backend nosuch = exit %d\n%s\nwant exit 2 and\n  %s", code, out, want)
	}
	if page := cachetest.HAProxyPage(t, stats); page["BACKEND"]["req_tot"] != 0 {
		t.Fatalf("backend api received %d requests from a refused run; want none", page["BACKEND"]["req_tot"])
	}

	results := t.TempDir()
	jsonFile := filepath.Join(results, "r.json")
	code, out = stampede(file("other"), "--results-dir", results, "-o", "json="+jsonFile)
	t.Logf("two arms on two backends:\n%s", out)
	if code != clitest.ExitOK {
		t.Fatalf("stampede with two backends = exit %d; want 0", code)
	}
	arms := clitest.ReadResults(t, jsonFile).Arms
	if len(arms) != 2 || arms[0].Name != "a" || arms[1].Name != "b" {
		t.Fatalf("arms %d; want a and b", len(arms))
	}
	armReadsItsBackend(t, arms[0], stats, "api")
	armReadsItsBackend(t, arms[1], stats, "other")
}

// armReadsItsBackend ties a's lb.* to backend's counters on HAProxy's
// page, read apart now that the run is over: it names the backend, its
// servers are the backend's; its requests from T are the clients' (within a row's worth:
// those in flight at T fall on either side of HAProxy's reading) and at
// most what the backend ever received; and the backend's req_tot is every
// attempt the arm's clients sent and its warm-up's, one a hot key.
func armReadsItsBackend(t *testing.T, a result.ArmResult, stats, backend string) {
	t.Helper()
	page := cachetest.HAProxyBackendPage(t, stats, backend)
	lb := a.LB
	if lb == nil || lb.Backend != backend {
		t.Fatalf("arm %s: lb %+v, warnings %v; want backend %s's", a.Name, lb, a.Warnings, backend)
	}
	var listed, read []string
	for name := range page {
		if name != "BACKEND" && name != "FRONTEND" {
			listed = append(listed, name)
		}
	}
	for name := range lb.Servers {
		read = append(read, name)
	}
	slices.Sort(listed)
	slices.Sort(read)
	if !slices.Equal(read, listed) {
		t.Errorf("arm %s: lb.servers %v; backend %s lists %v", a.Name, read, backend, listed)
	}
	var sent int64
	for _, r := range a.Timeline {
		sent += r.Attempts
	}
	received := page["BACKEND"]["req_tot"]
	t.Logf("arm %s: lb.requests %d, the clients' from T %d; backend %s received %d, the clients sent %d and the warm-up %d",
		a.Name, lb.Requests, a.HTTP.Requests, backend, received, sent, a.Warm.Keys)
	if d, tol := lb.Requests-a.HTTP.Requests, int64(10); lb.Requests == 0 || d < -tol || d > tol {
		t.Errorf("arm %s: lb.requests %d; the clients sent %d from T, want within %d", a.Name, lb.Requests, a.HTTP.Requests, tol)
	}
	if lb.Requests > received {
		t.Errorf("arm %s: lb.requests %d; backend %s received %d in all, want at most that", a.Name, lb.Requests, backend, received)
	}
	if d := received - sent - int64(a.Warm.Keys); d < -2 || d > 2 {
		t.Errorf("backend %s received %d; arm %s's clients sent %d attempts and its warm-up %d keys, want their sum", backend, received, a.Name, sent, a.Warm.Keys)
	}
}
