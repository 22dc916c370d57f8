package runs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
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
	t.Parallel()
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
	}{{"lock", clitest.ExitOK, true, 0}, {"none", clitest.ExitGatesFailed, false, 61}} {
		results := filepath.Join(t.TempDir(), "results")
		code, stdout, stderr := clitest.Run(t, env, "run", filepath.Join(dir, "ci-nginx-gate.yaml"), "--arms", c.arm,
			"--results-dir", results, "-o", "table", "--state-dir", t.TempDir())
		t.Logf("arm %s: exit %d\n%s%s", c.arm, code, stdout, stderr)
		g := clitest.Gate(t, results, "db.queries <= 60")
		if g.Pass != c.passes || g.Measured == nil || *g.Measured < c.minQuery {
			t.Errorf("arm %s: gate %+v; want pass %v", c.arm, g, c.passes)
		}
		// the drop-rate gate measures the runner too: the exit follows it
		want := c.code
		if !clitest.Gate(t, results, "http.drop_rate < 1%").Pass {
			want = clitest.ExitGatesFailed
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
	b, err := os.ReadFile(filepath.Join("../../../examples", name))
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
