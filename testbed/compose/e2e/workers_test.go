package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// containerWorkers are worker containers on a compose project's network
// and the service's replicas at their addresses there.
type containerWorkers struct {
	urls, replicas []string
	tokenFile      string
}

// startWorkers starts worker containers on network, each at its own
// address, as pods would be: the controller on the host reaches them at
// their addresses, they reach the replicas at theirs.
func startWorkers(t *testing.T, docker func(args ...string) string, network string) containerWorkers {
	t.Helper()
	const workers = 3
	project := strings.TrimSuffix(network, "_default")
	ip := func(container string) string {
		t.Helper()
		out, err := exec.Command("docker", "inspect", "-f", "{{(index .NetworkSettings.Networks \""+network+"\").IPAddress}}", container).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			t.Fatalf("docker inspect %s: %v: %s", container, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	var replicas []string
	for _, svc := range []string{"api-1", "api-2", "api-3"} {
		replicas = append(replicas, ip(strings.TrimSpace(docker("ps", "-q", svc))))
	}

	// beyond loopback a worker takes only calls with its token
	const token = "e2e-worker-token-0123456789abcdef"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var urls, seen []string
	for i := range workers {
		name := fmt.Sprintf("%s-worker-%d", project, i)
		args := []string{"run", "-d", "--rm", "--name", name, "--network", network, "-e", "HERDBENCH_WORKER_TOKEN=" + token,
			"herdbench:local", "worker", "--listen", ":7070"}
		for _, r := range replicas {
			args = append(args, "--allow-host", r)
		}
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })
		addr := ip(name)
		if slices.Contains(seen, addr) {
			t.Fatalf("worker %d at %s, an address another worker has", i, addr)
		}
		seen = append(seen, addr)
		urls = append(urls, "http://"+addr+":7070")
	}
	for _, u := range urls {
		waitFor(t, 30*time.Second, "worker "+u+" answers", func() bool {
			resp, err := http.Get(u + "/v1/clock")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		})
	}

	return containerWorkers{urls: urls, replicas: replicas, tokenFile: tokenFile}
}

// stampede: the workers send one herd at the replicas, and the merged
// results are the plan's.
func (c containerWorkers) stampede(t *testing.T) {
	urls, replicas, tokenFile, workers := c.urls, c.replicas, c.tokenFile, len(c.urls)
	// the service, described at the replicas' own addresses on the network
	dir := t.TempDir()
	var endpoints, allow strings.Builder
	for _, r := range replicas {
		fmt.Fprintf(&endpoints, "  - http://%s:8080\n", r)
		fmt.Fprintf(&allow, "  - %s\n", r)
	}
	target := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(target, []byte(`name: the docker testbed at its containers' addresses
endpoints:
`+endpoints.String()+`allow:
`+allow.String()+`request:
  path: /items/{key}
keys:
  zipf: {from: 1, to: 50, s: 1.1}
  hot: 50
redis: {address: 127.0.0.1:16379, key: "item:{key}", pattern: "item:*"}
postgres:
  dsn: postgres://herdbench@127.0.0.1:15432/herdbench?sslmode=disable
  role: herdbench_app
  statements: "FROM items i, pg_sleep"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results.json")
	const rate = 300
	code, stdout, stderr := localtest.Run(t, nil, "stampede", "--target", target, "--yes", "--workers", strings.Join(urls, ","), "--worker-token-file", tokenFile,
		"--rate", fmt.Sprint(rate), "--warmup", "500ms", "--before", "1s", "--after", "2s", "--results-dir", dir, "--json", out)
	t.Logf("stampede from %d worker containers: exit %d\n%s%s", workers, code, stdout, stderr)
	if code != 0 {
		t.Fatalf("stampede --workers %s: exit %d", strings.Join(urls, ","), code)
	}
	rep := readResults(t, out)
	a := rep.Arms[0]
	if a.Load.Intended != rate*3 || a.HTTP.Requests != rate*2 || !outcomesAddUp(a.HTTP) {
		t.Errorf("intended %d, http.requests %d (outcomes add up: %v); want the plan's %d and %d, every request one outcome",
			a.Load.Intended, a.HTTP.Requests, outcomesAddUp(a.HTTP), rate*3, rate*2)
	}
	ws := a.Workers
	if ws == nil || ws.Count != workers {
		t.Fatalf("workers %+v; want %d", ws, workers)
	}
	for i, w := range ws.Each {
		if w.URL != urls[i] || w.Load.Intended == 0 {
			t.Errorf("worker %d: %s intended %d; want %s, a share of the load", i, w.URL, w.Load.Intended, urls[i])
		}
	}
	if a.HTTP.OK == 0 || a.DB == nil || a.DB.Queries == 0 {
		t.Errorf("ok %d, db %+v; want the replicas to have served the workers, and the herd to reach the database", a.HTTP.OK, a.DB)
	}
}
