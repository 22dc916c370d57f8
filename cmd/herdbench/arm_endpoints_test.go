package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// An arm of a target file with endpoints of its own sends its load, its
// warm-up and its trigger's burst there and nowhere else: two arms, each on
// one of the testbed's two replicas, as two frontends of one load
// balancer would be, by the replicas' own request counters.
func TestAnArmSendsToItsOwnEndpoints(t *testing.T) {
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000})
	st := tb.Status()
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
		"--warmup", "0s", "--before", "500ms", "--after", "1s", "--state-dir", t.TempDir(), "--results-dir", t.TempDir()}
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
		got, elsewhere := itemRequests(t, []string{own})-own0, itemRequests(t, []string{other})-other0
		if elsewhere != 0 || got < float64(a.Load.Sent+10+10) {
			t.Errorf("arm %s: its endpoint served %v, the other %v; want every request (%d sent, 10 warm, a burst of 10) on its own, none elsewhere",
				arm, got, elsewhere, a.Load.Sent)
		}
	}
}
