package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/cachetest"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// A load balancer's own counters in an arm: HAProxy in front of the
// testbed's two replicas, retrying each failed request up to 3 times on
// another server. Postgres goes away for a second at T: the replicas'
// loads fail, HAProxy retries them, and lb.* shows it (more attempts at
// the servers than requests, its retries), while the clients, which retry
// nothing, send one attempt a request. HAProxy's requests are the
// clients' own, by their records.
func TestALoadBalancersRetriesAreCounted(t *testing.T) {
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 10000})
	st := tb.Status()
	cfg := api.DefaultConfig
	cfg.QueryCost = herd.Duration(time.Millisecond) // cheap loads: only the outage fails them
	if err := api.NewFleet(st.API).SetConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	var origins []string
	for _, u := range st.API {
		origins = append(origins, strings.TrimPrefix(u, "http://"))
	}
	base, stats := cachetest.HAProxy(t, origins, 3)
	localtest.Measures(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "lb.yaml")
	yaml := fmt.Sprintf(`name: the testbed behind HAProxy
endpoints: [%s]
request: {path: "/items/{key}"}
keys:
  range: {from: 1, to: 10000}
  hot: 10
postgres: {dsn: "${LB_PG_DSN}", role: herdbench_app, statements: "FROM items i, pg_sleep"}
toxiproxy: {url: %q, proxies: {postgres: postgres}}
haproxy: {stats: %q, backend: api}
`, base, st.Toxiproxy, stats)
	if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	code, stdout, stderr := herdbenchEnv(t, append(os.Environ(), "LB_PG_DSN="+st.Postgres), "stampede", "--target", target,
		"--arms", "baseline", "--trigger", "outage", "--dependency", "postgres", "--outage", "1s", "--rate", "200",
		"--warmup", "0s", "--before", "1s", "--after", "3s", "--seed", "3", "--results-dir", out, "-o", "table", "-o", "json="+jsonFile,
		"--gate", "lb.amplification > 1", "--state-dir", t.TempDir())
	t.Logf("stampede:\n%s%s", stdout, stderr)
	if code != exitOK {
		t.Fatalf("stampede behind HAProxy = exit %d", code)
	}
	a := readResults(t, jsonFile).Arms[0]
	lb := a.LB
	if lb == nil {
		t.Fatalf("no lb in the results; warnings %v", a.Warnings)
	}
	if d := lb.Requests - a.Load.Sent; d < 0 || d > 1 {
		t.Errorf("HAProxy received %d requests; the clients sent %d (their records, the whole load)", lb.Requests, a.Load.Sent)
	}
	var sum int64
	for _, s := range lb.Servers {
		sum += s.Attempts
		if s.Attempts == 0 || s.Status == "" || strings.Contains(s.Status, "DOWN") {
			t.Errorf("server %s: %d attempts, %q at the end; want its share, not down (no check: HAProxy's own word)", s.Name, s.Attempts, s.Status)
		}
	}
	if len(lb.Servers) != 2 || sum != lb.ServerAttempts {
		t.Errorf("servers %+v add up to %d; want 2 adding up to server_attempts %d", lb.Servers, sum, lb.ServerAttempts)
	}
	if lb.Retries == 0 || lb.ServerAttempts <= lb.Requests || a.Retries.Amplification != 1 {
		t.Errorf("lb %+v, the clients' amplification %v; want HAProxy's retries showing (more server attempts than requests) "+
			"while the clients sent one attempt a request", *lb, a.Retries.Amplification)
	}
}
