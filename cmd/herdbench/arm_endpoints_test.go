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
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
)

// An arm of a target file with endpoints of its own sends its load, its
// warm-up and its trigger's burst there and nowhere else: two arms, each on
// one of the testbed's two replicas, as two frontends of one load
// balancer would be, by the replicas' own request counters.
func TestAnArmSendsToItsOwnEndpoints(t *testing.T) {
	t.Parallel()
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000})
	st := tb.Status()
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(time.Millisecond) // every request answered within its timeout: none still served after the arm
	if err := admin.NewFleet(st.API).SetConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "two.yaml")
	yaml := fmt.Sprintf(`endpoints: [%s, %s]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 1000}, hot: 10}
arms:
  - {name: first, endpoints: [%s]}
  - {name: second, endpoints: [%s]}
`, st.API[0], st.API[1], st.API[0], st.API[1])
	if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"stampede", "--target", target, "--trigger", "burst", "--burst", "10", "--rate", "100",
		"--warmup", "0s", "--before", "1s", "--after", "1s", "--state-dir", t.TempDir(), "--results-dir", t.TempDir()}
	code, stdout, stderr := herdbench(t, append(args, "--dry-run")...)
	if code != exitOK || !strings.Contains(stdout, "arm       first: its own endpoints "+st.API[0]) {
		t.Fatalf("dry run = exit %d; want arm first on its own endpoint\n%s%s", code, stdout, stderr)
	}
	localtest.Measures(t)
	for i, arm := range []string{"first", "second"} {
		own, other := st.API[i], st.API[1-i]
		own0, other0 := itemRequests(t, []string{own}), itemRequests(t, []string{other})
		jsonFile := filepath.Join(t.TempDir(), "r.json")
		code, stdout, stderr := herdbench(t, append(args, "--arms", arm, "-o", "json="+jsonFile)...)
		if code != exitOK {
			t.Fatalf("arm %s = exit %d\n%s%s", arm, code, stdout, stderr)
		}
		a := readResults(t, jsonFile).Arms[0]
		got, elsewhere := settled(t, own)-own0, settled(t, other)-other0
		if elsewhere != 0 || got < float64(a.Load.Sent+10+10) {
			t.Errorf("arm %s: its endpoint served %v, the other %v; want every request (%d sent, 10 warm, a burst of 10) on its own, none elsewhere",
				arm, got, elsewhere, a.Load.Sent)
		}
	}
}

// settled is a replica's item requests once they stop growing: polled
// every 100 ms, for 5 s at most.
func settled(t *testing.T, replica string) float64 {
	t.Helper()
	last := itemRequests(t, []string{replica})
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // polling, with the deadline above
		n := itemRequests(t, []string{replica})
		if n == last {
			return n
		}
		last = n
	}
	return last
}
