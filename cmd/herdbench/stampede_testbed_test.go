package main

import (
	"bufio"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// apiRequests is what a replica's /metrics says of the requests it
// answered: herdbench_api_requests_total's lines with a value other than 0.
func apiRequests(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "herdbench_api_requests_total") && !strings.HasSuffix(l, " 0") {
			out = append(out, l)
		}
	}
	return out
}

// A plan whose key space is beyond the testbed's items is refused before
// anything runs: on the running testbed, and on the one the stampede
// would start.
func TestStampedeRefusesKeysBeyondTheItems(t *testing.T) {
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	if code, stdout, stderr := herdbench(t, "testbed", "up", "--state-dir", dir, "--replicas", "1", "--items", "50"); code != exitOK {
		t.Fatalf("testbed up = exit %d\n%s%s", code, stdout, stderr)
	}
	st, err := local.ReadStatus(dir)
	if err != nil || st.Items != 50 {
		t.Fatalf("status = items %d, %v; want 50 recorded", st.Items, err)
	}
	// shortStampede's --keys 200 replaced: a flag is given once
	short := slices.Clone(shortStampede)
	short[slices.Index(short, "--keys")+1] = "100"
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--arms", "none"}, short...)
	code, _, stderr := herdbench(t, args...)
	for _, want := range []string{"--keys: 100 is more than the 50 items the testbed running in " + st.StateDir + " was seeded with",
		"'herdbench testbed down', then 'herdbench testbed up --items 100'"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("stampede --keys 100 on 50 items = exit %d, %q; want 2, saying %q", code, stderr, want)
		}
	}
	if sent := apiRequests(t, st.API[0]); len(sent) > 0 {
		t.Errorf("the replica answered requests of a refused stampede: %v", sent)
	}
	if kept, _ := filepath.Glob(filepath.Join(out, "*")); len(kept) > 0 {
		t.Errorf("a refused stampede wrote %v", kept)
	}

	// nothing runs: the local testbed it would start has 10000 items
	fresh := stateDir(t)
	code, _, stderr = herdbench(t, "stampede", "--state-dir", fresh, "--results-dir", out, "--keys", "20000", "--dry-run")
	if code != exitUsage || !strings.Contains(stderr, "--keys: 20000 is more than the 10000 items the local testbed would be seeded with") ||
		!strings.Contains(stderr, "--items 20000") {
		t.Errorf("stampede --keys 20000 --dry-run = exit %d, %q; want 2, naming --keys, the items and --items", code, stderr)
	}
	code, _, stderr = herdbench(t, "stampede", "--state-dir", fresh, "--results-dir", out, "--keys", "20000")
	if code != exitUsage || !strings.Contains(stderr, "--keys: 20000 is more than the 10000 items") || strings.Contains(stderr, "starting") {
		t.Errorf("stampede --keys 20000 = exit %d, %q; want 2 before starting anything", code, stderr)
	}
	if pids := local.Processes(fresh); len(pids) > 0 {
		t.Errorf("processes of a refused stampede: %v", pids)
	}
}

// A stampede starts what testbed up can: with --tiers 2 the edges, which
// the clients attack, and stops everything at the end.
func TestStampedeStartsTwoTiers(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--json", jsonFile,
		"--arms", "none", "--replicas", "1", "--tiers", "2", "--items", "300"}, shortStampede...)
	code, stdout, stderr := herdbench(t, args...)
	if code != exitOK || !strings.Contains(stderr, "starting the local testbed") || !strings.Contains(stderr, "stopping the local testbed") {
		t.Fatalf("stampede --tiers 2 = exit %d; want 0, starting and stopping the local testbed\n%s%s", code, stdout, stderr)
	}
	rep := readResults(t, jsonFile)
	if len(rep.Arms) != 1 {
		t.Fatalf("results: %d arms; want 1", len(rep.Arms))
	}
	if l := rep.Arms[0].Layers; l == nil || l.Edge == 0 || rep.Environment.Replicas != 1 {
		t.Errorf("results: layers %+v, replicas %d; want the edges answering the clients, 1 replica", l, rep.Environment.Replicas)
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after the stampede: %v", pids)
	}
	if _, err := local.ReadStatus(dir); err == nil {
		t.Error("a testbed still runs after a stampede that started its own")
	}
}

// The stampede on Memcached and MariaDB: --cache memcached --db mariadb
// start a testbed on them, every arm's db.queries are MariaDB's digest
// counts (each load one item query), its cache figures Memcached's, the
// results name both servers' versions, and nothing is left after it.
func TestStampedeOnMemcachedAndMariaDB(t *testing.T) {
	t.Parallel()
	localtest.Measures(t)
	localtest.Require(t)
	dir, out := stateDir(t), t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	args := append([]string{"stampede", "--state-dir", dir, "--results-dir", out, "--json", jsonFile,
		"--arms", "none,lock", "--replicas", "2", "--cache", "memcached", "--db", "mariadb"}, shortStampede...)
	code, stdout, stderr := herdbench(t, args...)
	if code != exitOK {
		t.Fatalf("stampede --cache memcached --db mariadb = exit %d\n%s%s", code, stdout, stderr)
	}
	if want := "Memcached "; !strings.Contains(stdout, want) || !strings.Contains(stdout, "MariaDB ") || strings.Contains(stdout, "PostgreSQL") {
		t.Errorf("stampede output names its stores wrong, want Memcached and MariaDB, no PostgreSQL:\n%s", stdout)
	}
	rep := readResults(t, jsonFile)
	env := rep.Environment
	if env.MariaDB == "" || env.Memcached == "" || env.Postgres != "" || len(rep.Arms) != 2 {
		t.Fatalf("results: environment %+v, %d arms; want MariaDB's and Memcached's versions, no Postgres, 2 arms", env, len(rep.Arms))
	}
	for _, a := range rep.Arms {
		if a.DB == nil || a.Cache == nil || a.API == nil || a.API.Value("loads") != a.DB.QueriesTotal || a.Cache.Hits == 0 {
			t.Errorf("arm %s: db %+v, cache %+v, api %+v; want MariaDB's item queries, one a load, and Memcached's hits", a.Name, a.DB, a.Cache, a.API)
		}
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after the stampede: %v", pids)
	}
}
