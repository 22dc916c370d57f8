package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// `testbed up --provider docker --tiers 2` on a real engine: three edge
// containers in front of the three replicas, each calling them through
// toxiproxy's api-N proxies, with the policy up was given; an arm's edge
// policy reaches them; down leaves nothing, edges included.
func TestTwoTiersOnDocker(t *testing.T) {
	composetest.Require(t)
	st, dir := up(t, "--tiers", "2", "--edge-timeout", "500ms", "--edge-retry", "immediate:1")
	localtest.Exclusive(t) // what follows measures; the up does not
	if len(st.Edge) != 3 || st.Edge[0] != "http://127.0.0.1:18091" || st.Proxies["api-1"] != "toxiproxy:18081" || st.Proxies["api-3"] != "toxiproxy:18083" {
		t.Fatalf("up --tiers 2: edges %v, proxies %v; want 3 edges from 127.0.0.1:18091 and the api-N proxies", st.Edge, st.Proxies)
	}
	for i, e := range st.Edge {
		// the first load after up is cold: on a busy machine it may take
		// longer than the edge's 500 ms twice (a 502, CI on 89927d7), so
		// the edge is polled until it answers, with a deadline
		var status int
		var from string
		waitFor(t, 20*time.Second, "edge "+e+" answers /items/42", func() bool {
			resp, err := http.Get(e + "/items/42")
			if err != nil {
				return false
			}
			resp.Body.Close()
			status, from = resp.StatusCode, resp.Header.Get("X-Edge")
			return status == http.StatusOK
		})
		if from != fmt.Sprintf("edge-%d", i+1) {
			t.Errorf("GET %s/items/42: %d from %q; want 200 from edge-%d", e, status, from, i+1)
		}
	}
	fleet := edge.NewFleet(st.Edge)
	if cfg, err := fleet.Config(context.Background()); err != nil || cfg.String() != "timeout 500ms, retry immediate:1" {
		t.Errorf("the edges run with %q (%v); want up's --edge-timeout 500ms --edge-retry immediate:1", cfg.String(), err)
	}

	// toxiproxy's api-N proxies cut A from B: the edge tries twice, then 502
	proxy := func(name string, enabled bool) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, st.Toxiproxy+"/proxies/"+name, bytes.NewBufferString(fmt.Sprintf(`{"enabled": %v}`, enabled)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("toxiproxy %s enabled=%v: %d", name, enabled, resp.StatusCode)
		}
	}
	before, err := fleet.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"api-1", "api-2", "api-3"} {
		proxy(p, false)
	}
	resp, err := http.Get(st.Edge[0] + "/items/42")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, p := range []string{"api-1", "api-2", "api-3"} {
		proxy(p, true)
	}
	after, err := fleet.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadGateway || after.Attempts-before.Attempts != 2 {
		t.Errorf("with the api-N proxies disabled: %d after %d attempts; want 502 after 2 (immediate:1)", resp.StatusCode, after.Attempts-before.Attempts)
	}

	// a short run whose second arm sets a breaker at A: both arms have
	// their layers, and the breaker reached the edges
	out := t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	herdbench(t, "stampede", "--state-dir", dir, "--results-dir", out, "-o", "json="+jsonFile, "--arms", "none,edge-breaker=5:1s",
		"--rate", "50", "--warmup", "300ms", "--before", "1s", "--after", "1500ms", "--keys", "1000", "--hot-keys", "20")
	rep := readResults(t, jsonFile)
	if len(rep.Arms) != 2 {
		t.Fatalf("%d arms; want 2", len(rep.Arms))
	}
	for _, a := range rep.Arms {
		if a.Layers == nil || a.Edge == nil || a.Layers.Requests == 0 || a.Layers.DBQueries != a.DB.QueriesTotal {
			t.Errorf("%s: layers %+v, edge %+v; want the layers, their db_queries pg_stat_statements' %d", a.Name, a.Layers, a.Edge, a.DB.QueriesTotal)
		}
	}
	if b := rep.Arms[1].Edge; b == nil || b.Config.Breaker.String() != "5:1s" {
		t.Errorf("edge-breaker=5:1s arm: edge %+v; want the breaker 5:1s at the edges", b)
	}

	herdbench(t, "testbed", "down", "--state-dir", dir)
	if left := leftovers(t, compose.DefaultProject); len(left) > 0 {
		t.Errorf("after testbed down, docker holds %v of project %s; want nothing, edges included", left, compose.DefaultProject)
	}
}
