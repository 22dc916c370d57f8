package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/cachetest"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
)

// docs/ci.md's nginx job: examples/ci-nginx-gate.yaml gates the database
// queries behind a real nginx, started here in front of the testbed's
// replicas as the job starts the service and its nginx. The gate passes
// on the arm whose proxy_cache_lock coalesces the purged keys and fails
// (exit 99) on the one without. The examples' fixed addresses are the
// test's own: nginx's and Redis' free ports.
func TestGateOnNginxInFrontOfAService(t *testing.T) {
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000})
	st := tb.Status()
	cfg := replica.DefaultConfig
	cfg.Strategy, cfg.QueryCost = "none", herd.Duration(200*time.Millisecond)
	if err := admin.NewFleet(st.API).SetConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	var origins []string
	for _, u := range st.API {
		origins = append(origins, strings.TrimPrefix(u, "http://"))
	}
	nginx := cachetest.Nginx(t, origins, time.Minute)

	dir := t.TempDir()
	copyExample(t, "nginx-service.yaml", dir, "http://127.0.0.1:8080", nginx, "127.0.0.1:6379", strings.TrimPrefix(st.Redis, "redis://"))
	copyExample(t, "ci-nginx-gate.yaml", dir, "target: examples/nginx-service.yaml", "target: "+filepath.Join(dir, "nginx-service.yaml"))
	env := append(os.Environ(), "SERVICE_PG_DSN="+st.Postgres)
	for _, c := range []struct {
		arm      string
		code     int
		passes   bool
		minQuery float64
	}{{"lock", exitOK, true, 0}, {"none", exitGatesFailed, false, 61}} {
		results := filepath.Join(t.TempDir(), "results")
		code, stdout, stderr := herdbenchEnv(t, env, "run", filepath.Join(dir, "ci-nginx-gate.yaml"), "--arms", c.arm,
			"--results-dir", results, "-o", "table", "--state-dir", t.TempDir())
		t.Logf("arm %s: exit %d\n%s%s", c.arm, code, stdout, stderr)
		g := gateNamed(t, results, "db.queries <= 60")
		if g.Pass != c.passes || g.Measured == nil || *g.Measured < c.minQuery {
			t.Errorf("arm %s: gate %+v; want pass %v", c.arm, g, c.passes)
		}
		// the drop-rate gate measures the runner too: the exit follows it
		want := c.code
		if !gateNamed(t, results, "http.drop_rate < 1%").Pass {
			want = exitGatesFailed
		}
		if code != want {
			t.Errorf("arm %s: exit %d; want %d", c.arm, code, want)
		}
	}
}

// copyExample copies examples/NAME into dir, each old string replaced by
// the new one after it.
func copyExample(t *testing.T, name, dir string, oldNew ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../examples", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(oldNew); i += 2 {
		if !strings.Contains(s, oldNew[i]) {
			t.Fatalf("examples/%s has no %q", name, oldNew[i])
		}
		s = strings.ReplaceAll(s, oldNew[i], oldNew[i+1])
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gateNamed is the gate written expr in the run's results under dir.
func gateNamed(t *testing.T, dir, expr string) gates.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "results.json"))
	if len(files) != 1 {
		t.Fatalf("results files under %s: %v; want one", dir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Gates []gates.Result `json:"gates"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gates {
		if g.Gate == expr {
			return g
		}
	}
	t.Fatalf("no gate %q in %s", expr, b)
	return gates.Result{}
}

// The HTTP-cache examples check out, and their dry runs name the purges
// and the flush they would send, with nothing sent.
func TestHTTPCacheExamples(t *testing.T) {
	env := append(environ(nil), "SERVICE_PG_DSN=postgres://herdbench@127.0.0.1:1/herdbench")
	for _, c := range []struct{ file, trigger, want string }{
		{"nginx-service.yaml", "expire", "and GET /purge/items/{key} on http://127.0.0.1:8080, with the arm's selection, for each of 50 hot keys: 1, 2,"},
		{"varnish-service.yaml", "expire", "and PURGE /items/{key} (headers X-Purge) on http://127.0.0.1:6081, with the arm's selection"},
		{"varnish-service.yaml", "flush", "and BAN / (headers X-Ban-Url) on http://127.0.0.1:6081"},
	} {
		code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", "../../examples/"+c.file, "--dry-run",
			"--trigger", c.trigger, "--rate", "500", "--state-dir", t.TempDir())
		if code != exitOK || !strings.Contains(stdout, c.want) {
			t.Errorf("dry run of examples/%s with %s = exit %d; want it to hold %q\n%s%s", c.file, c.trigger, code, c.want, stdout, stderr)
		}
	}
}
