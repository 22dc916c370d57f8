package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// The tests drive the built binary: exit codes and detaching are
// properties of the real process.
//
// The tests that measure on a testbed of their own run in parallel
// (t.Parallel), as experiment/ontestbed's do: what each measures takes
// one of machinelock.Seats, shared with every other package's load tests,
// so the machine is no busier; the others run one at a time before them.
func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// herdbench runs the binary and returns its exit code and output.
func herdbench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, nil, args...)
}

// herdbenchEnv runs the binary in env.
func herdbenchEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, env, args...)
}

// stateDir is a state directory whose testbed, if a test left one, is
// brought down at the end.
func stateDir(t *testing.T) string {
	t.Helper()
	return clitest.StateDir(t)
}

// running reports whether pid is a live process. An exited process that
// init has not reaped yet (a zombie) holds nothing and does not count.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: ask the kernel
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

func TestExitCodes(t *testing.T) {
	// the codes the tests of other packages read the binary's exit by
	if got, want := []int{clitest.ExitOK, clitest.ExitError, clitest.ExitUsage, clitest.ExitGatesFailed},
		[]int{exitOK, exitError, exitUsage, exitGatesFailed}; !slices.Equal(got, want) {
		t.Errorf("clitest's exit codes %v; want the command's %v", got, want)
	}
	empty := t.TempDir()
	tests := []struct {
		args       []string
		want       int
		wantStderr string
	}{
		{[]string{"version"}, exitOK, ""},
		{[]string{"triggers", "extra"}, exitUsage, `herdbench triggers: takes no arguments, and was given extra`},
		{[]string{"stampede", "--retry", "linear:1s"}, exitUsage, `for "--retry" flag: retry policy "linear:1s": unknown kind "linear" (accepted: none, immediate:N`},
		{[]string{"stampede", "--retry-budget", "lots"}, exitUsage, `for "--retry-budget" flag: retry budget "lots": unknown form (accepted: none, a ratio such as 10%`},
		{[]string{"stampede", "--arms", "none,throttle=two"}, exitUsage, `--arms: throttle=two: K "two" is not a number (accepted: 0, off, or K above 0 and at most 100`},
		{[]string{"stampede", "--arms", "none,retry=exp:1s"}, exitUsage, "--arms: \"retry=exp:1s\": retry policy \"exp:1s\": exp takes 4 parts"},
		{[]string{"stampede", "--trigger", "outage", "--dependency", "dns"}, exitUsage, "--dependency: unknown \"dns\" (accepted: postgres, redis)"},
		{[]string{"bogus"}, exitUsage, `unknown command "bogus"`},
		{[]string{"stampede", "--db-retry", "exp:1"}, exitUsage, "db_retry: retry policy \"exp:1\": exp takes 4 parts separated by ':', got 2 (accepted: none, immediate:N"},
		{[]string{"testbed", "up", "--tiers", "3"}, exitUsage, "--tiers: 3 out of range (accepted: 1, the API replicas; 2, edge replicas in front of them)"},
		{[]string{"testbed", "up", "--tiers", "2", "--edge-retry", "linear:1s"}, exitUsage, `for "--edge-retry" flag: retry policy "linear:1s": unknown kind`},
		{[]string{"testbed", "up", "--edge-timeout", "0s"}, exitUsage, "--edge-timeout: 0s out of range (accepted: 1ms to 1m)"},
		{[]string{"testbed", "up", "--edge-retry", "immediate:2"}, exitUsage, "--edge-retry: sets the edge tier's policy, and there is none with --tiers 1 (accepted with --tiers 2)"},
		{[]string{"testbed", "edge"}, exitUsage, "--upstream: required: the API replicas' base URLs"},
		{[]string{"testbed", "edge", "--upstream", "127.0.0.1:8081"}, exitUsage, `--upstream: "127.0.0.1:8081": want an API replica's base URL, http://HOST:PORT`},
		{[]string{"testbed", "edge", "--upstream", "http://127.0.0.1:8081", "--timeout", "0s"}, exitUsage, "--timeout: 0s out of range (accepted: 1ms to 1m)"},
		{[]string{"testbed", "edge", "--upstream", "http://127.0.0.1:8081", "--bulkhead", "-1"}, exitUsage, "--bulkhead: -1 out of range (accepted: 0, unbounded, to 100000)"},
		{[]string{"testbed", "edge", "--upstream", "http://127.0.0.1:8081", "--breaker", "5"}, exitUsage, `for "--breaker" flag: breaker "5": want two parts`},
		{[]string{"testbed", "up", "--tiers", "2", "--edge-deadline", "-1s"}, exitUsage, "--edge-deadline: -1s out of range (accepted: 0, none, to 1h)"},
		// every problem of up's and edge's flags at once
		{[]string{"testbed", "up", "--tiers", "3", "--replicas", "0"}, exitUsage, "--replicas: 0 out of range (accepted: 1 to 64)\n--tiers: 3 out of range"},
		{[]string{"testbed", "edge", "--timeout", "0s", "--bulkhead", "-1"}, exitUsage, "--timeout: 0s out of range (accepted: 1ms to 1m)\n--bulkhead: -1 out of range (accepted: 0, unbounded, to 100000)\n--upstream: required"},
		{[]string{"testbed", "up", "--edge-bulkhead", "5"}, exitUsage, "--edge-bulkhead: sets the edge tier's policy, and there is none with --tiers 1"},
		{[]string{"stampede", "--dry-run", "--arms", "none,edge-bulkhead=x"}, exitUsage, "edge bulkhead \"x\": not a whole number"},
		{[]string{"stampede", "--dry-run", "--arms", "none,edge-breaker=5"}, exitUsage, `--arms: edge-breaker=5: edge breaker "5": want two parts`},
		{[]string{"testbed", "up", "--tiers", "2", "--edge-breaker", "5"}, exitUsage, `for "--edge-breaker" flag: breaker "5": want two parts`},
		{[]string{"stampede", "--dry-run", "--db", "oracle"}, exitUsage, `--db: "oracle" is not a database (accepted: postgres, mariadb)`},
		{[]string{"stampede", "--dry-run", "--cache", "memcache"}, exitUsage, `--cache: "memcache" is not a cache (accepted: redis, memcached)`},
		{[]string{"testbed", "up", "--db", "mariadb", "--observability", "--provider", "local"}, exitUsage, `--observability: its Postgres exporter and dashboards read Postgres, and the database is MariaDB`},
		{[]string{"stampede", "--dry-run", "--trigger", "writes", "--write-restart", "kafka"}, exitUsage, `--write-restart: unknown "kafka" (accepted: none, api, redis, postgres, memcached, mariadb)`},
		{[]string{"stampede", "--dry-run", "--trigger", "writes", "--write-kill"}, exitUsage, "--write-kill: true without write_restart (accepted: with write_restart naming a part, such as api)"},
		{[]string{"stampede", "--dry-run", "--trigger", "writes", "--write-settle", "0s"}, exitUsage, "--write-settle: 0s out of range (accepted: more than 0s, up to 10m0s)"},
		{[]string{"stampede", "--dry-run", "--trigger", "writes", "--write-rate", "-1"}, exitUsage, "--write-rate: -1 out of range (accepted: 0, none, to 10000 writes/s)"},
		{[]string{"testbed", "up", "--write-invalidate", "purge"}, exitUsage, `--write-invalidate: "purge" is not accepted (accepted: none, delete, refresh)`},
		{[]string{"testbed", "edge", "--upstream", "http://127.0.0.1:8081", "--retry", "linear:1s"}, exitUsage, `for "--retry" flag: retry policy "linear:1s": unknown kind "linear" (accepted: none, immediate:N`},
		{[]string{"testbed", "edge", "--upstream", "http://127.0.0.1:8081", "--retry-budget", "lots"}, exitUsage, `for "--retry-budget" flag: retry budget "lots": unknown form`},
		{[]string{"testbed", "bogus"}, exitUsage, `unknown command "bogus"`},
		{[]string{"--no-such-flag"}, exitUsage, "unknown flag: --no-such-flag"},
		{[]string{"testbed", "up", "--replicas", "0"}, exitUsage, "--replicas: 0 out of range (accepted: 1 to 64)"},
		{[]string{"testbed", "up", "--timeout", "0s"}, exitUsage, "--timeout: 0s out of range (accepted: more than 0, such as 30s)"},
		{[]string{"testbed", "up", "--db-pool", "0"}, exitUsage, "--db-pool: 0 out of range (accepted: 1 to 1000 connections per replica)"},
		{[]string{"testbed", "up", "--redis-timeout", "0s"}, exitUsage, "--redis-timeout: 0s out of range (accepted: 1ms or more, such as 1s)"},
		{[]string{"testbed", "serve", "--redis-pool", "0"}, exitUsage, "--redis-pool: 0 out of range (accepted: 1 to 10000 connections per replica)"},
		{[]string{"stampede", "--clients", "0"}, exitUsage, "--clients: 0 out of range (accepted: 1 to 100000)"},
		{[]string{"stampede", "--dry-run", "--arms", "none,edge-bulkhead=-5"}, exitUsage, "--arms: edge-bulkhead=-5: edge bulkhead: -5 out of range (accepted: 0, unbounded, to 100000)"},
		// an edge arm, a gate on the edge tier's figures: the stampede would start one tier
		{[]string{"stampede", "--state-dir", empty, "--arms", "none,edge-retry=immediate:2"}, exitUsage, `--arms: "edge-retry=immediate:2": sets the edge replicas' policy, and the local testbed the run would start in ` +
			empty + " (3 replicas, 10000 items, one tier) has no edge tier (accepted: a testbed started with --tiers 2, by testbed up or by the run)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--arms", "none,edge-retry=immediate:2"}, exitUsage, "has no edge tier (accepted: a testbed started with --tiers 2, by testbed up or by the run)"},
		{[]string{"stampede", "--state-dir", empty, "--gate", "layers.end_to_end < 2"}, exitUsage, `--gate: "layers.end_to_end < 2": layers.end_to_end is a figure of the edge tier, and the local testbed the run would start in ` +
			empty + " (3 replicas, 10000 items, one tier) has none (accepted: a path outside edge.* and layers.*, or a testbed started with --tiers 2, by testbed up or by the run)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--gate", "edge.counters.attempts < 2"}, exitUsage, "edge.counters.attempts is a figure of the edge tier"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--gate", "verdict == sunny"}, exitUsage, `--gate: "verdict == sunny": unknown verdict "sunny" (accepted: recovered, relapsed, metastable, overloaded, recovering)`},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--gate", "verdict > 1"}, exitUsage, `--gate: "verdict > 1": verdict is a word (accepted: == or != one of recovered, relapsed, metastable, overloaded, recovering)`},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--after", "soon"}, exitUsage, `invalid argument "soon" for "--after" flag: "soon" is neither a duration such as 8s nor auto or auto:MAX such as auto:30s`},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--after", "auto:1m:2"}, exitUsage, `"auto:1m:2": auto's MAX is not a duration (accepted: auto, or auto:MAX such as auto:30s)`},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--abort-on", "verdict == recovering"}, exitUsage, `--abort-on: "verdict == recovering": unknown verdict "recovering" (accepted: recovered, metastable, overloaded)`},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--gate", "prometheus.db_qps.max <= 120"}, exitUsage, `--gate: "prometheus.db_qps.max <= 120": prometheus.db_qps.max names a series, and the local testbed the run would start in`},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--gate", "prometheus.db_qps.p50 <= 120"}, exitUsage, `"p50" is not how a series becomes a figure (accepted: prometheus.NAME.AGG, AGG one of max, min, mean, sum, last, over the after window)`},
		{[]string{"testbed", "up", "--replicas", "three"}, exitUsage, `--replicas: "three" is not a whole number (accepted: a whole number: API replicas`},
		{[]string{"testbed", "up", "--strategy", "magic", "--ttl-jitter", "7"}, exitUsage, "--strategy: unknown \"magic\" (accepted: none, singleflight, lock, xfetch, swr, lease, early, ttl_jitter, local"},
		{[]string{"testbed", "up", "--strategy", "magic", "--ttl-jitter", "7"}, exitUsage, "--ttl-jitter: 7 out of range (accepted: 0 to 1"},
		{[]string{"testbed", "serve"}, exitUsage, "--redis and --postgres are required"},
		{[]string{"testbed", "status", "--state-dir", empty}, exitError, "no testbed is running"},
		{[]string{"testbed", "status", "--json", "--template", "x", "--state-dir", empty}, exitUsage, "--json and --template: use one of them"},
		{[]string{"testbed", "down", "--state-dir", empty}, exitOK, ""},
		// a restart is planned on the testbed the run would start, for the
		// parts it would run
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--trigger", "restart", "--restart", "memcached", "--cache", "memcached"}, exitOK, ""},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--trigger", "restart", "--restart", "postgres", "--db", "mariadb"}, exitUsage,
			"trigger restart needs a testbed that runs postgres (this one runs api, redis, mariadb)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := herdbench(t, tt.args...)
			if code != tt.want || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("herdbench %s = exit %d, stderr %q; want exit %d, stderr containing %q",
					strings.Join(tt.args, " "), code, stderr, tt.want, tt.wantStderr)
			}
		})
	}
}

// testbed status says what to do, once: start a testbed where none is
// recorded, clean up where one's supervisor is gone.
func TestStatusSaysWhatToDo(t *testing.T) {
	empty, dead := t.TempDir(), t.TempDir()
	// a testbed whose supervisor, no such pid, is gone
	state := `{"ready": true, "supervisor": {"name": "supervisor", "pid": 4194304}}`
	if err := os.WriteFile(filepath.Join(dead, "state.json"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want, not string }{
		{empty, "no testbed is running in " + empty + ": start one with 'herdbench testbed up --state-dir " + empty + "'", "testbed down"},
		{dead, "its supervisor (pid 4194304) is gone; `herdbench testbed down` cleans up what it left", "start one with"},
	} {
		code, _, stderr := herdbench(t, "testbed", "status", "--state-dir", tt.dir)
		if code != exitError || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, tt.not) {
			t.Errorf("testbed status --state-dir %s = exit %d, stderr %q; want exit 1 saying %q, not %q", tt.dir, code, stderr, tt.want, tt.not)
		}
	}
}

func TestTriggersListsEveryTrigger(t *testing.T) {
	code, stdout, _ := herdbench(t, "triggers")
	for _, name := range []string{"expire", "ttl", "flush", "conndrop", "outage", "slowdb", "burst", "restart", "notify"} {
		if code != exitOK || !strings.Contains(stdout, name+" ") {
			t.Errorf("herdbench triggers = exit %d:\n%s\nwant a line for %s", code, stdout, name)
		}
	}
}

func TestUpStatusDown(t *testing.T) {
	localtest.Require(t)
	dir := stateDir(t)
	code, stdout, stderr := herdbench(t, "testbed", "up", "--state-dir", dir, "--replicas", "2", "--items", "100", "--strategy", "singleflight")
	if code != exitOK {
		t.Fatalf("testbed up = exit %d\n%s%s", code, stdout, stderr)
	}
	// up returned, the testbed keeps running
	code, stdout, _ = herdbench(t, "testbed", "status", "--json", "--state-dir", dir)
	var st testbed.Status
	if err := json.Unmarshal([]byte(stdout), &st); code != exitOK || err != nil {
		t.Fatalf("testbed status --json = exit %d, %v:\n%s", code, err, stdout)
	}
	if st.Provider != "local" || len(st.API) != 2 || st.Redis == "" || st.Postgres == "" || st.Toxiproxy == "" || st.StateDir != dir || len(st.PIDs) < 6 {
		t.Errorf("status --json = %+v; want provider, 2 api URLs, redis, postgres, toxiproxy, state_dir and pids", st)
	}
	code, api0, _ := herdbench(t, "testbed", "status", "--state-dir", dir, "--template", "{{index .API 0}}")
	if code != exitOK || strings.TrimSpace(api0) != st.API[0] {
		t.Errorf("status --template '{{index .API 0}}' = %q; want %q", api0, st.API[0])
	}
	resp, err := http.Get(st.API[1] + "/items/42")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "miss" {
		t.Errorf("GET /items/42 = %s, X-Cache %q; want 200, miss", resp.Status, resp.Header.Get("X-Cache"))
	}
	cfg, err := http.Get(st.API[1] + "/admin/config")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Strategy string }
	_ = json.NewDecoder(cfg.Body).Decode(&c)
	cfg.Body.Close()
	if c.Strategy != "singleflight" {
		t.Errorf("replica strategy = %q; want singleflight, passed from up --strategy", c.Strategy)
	}

	// a second up says so and changes nothing
	code, _, stderr = herdbench(t, "testbed", "up", "--state-dir", dir)
	if code != exitOK || !strings.Contains(stderr, "already running") {
		t.Errorf("second up = exit %d, stderr %q; want 0 and 'already running'", code, stderr)
	}
	_, again, _ := herdbench(t, "testbed", "status", "--json", "--state-dir", dir)
	var st2 testbed.Status
	_ = json.Unmarshal([]byte(again), &st2)
	if st2.PIDs["supervisor"] != st.PIDs["supervisor"] || st2.PIDs["postgres"] != st.PIDs["postgres"] {
		t.Errorf("pids after a second up = %v; want unchanged %v", st2.PIDs, st.PIDs)
	}

	code, stdout, stderr = herdbench(t, "testbed", "down", "--state-dir", dir)
	if code != exitOK || !strings.Contains(stdout, "testbed stopped") {
		t.Fatalf("testbed down = exit %d\n%s%s", code, stdout, stderr)
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after down: %v", pids)
	}
	for name, pid := range st.PIDs {
		if running(pid) {
			t.Errorf("%s (pid %d) still running after down", name, pid)
		}
	}
	if code, _, _ := herdbench(t, "testbed", "status", "--state-dir", dir); code != exitError {
		t.Errorf("status after down = exit %d; want 1", code)
	}
}

func TestFailedUpLeavesNothing(t *testing.T) {
	localtest.Require(t)
	dir := stateDir(t)
	code, _, stderr := herdbench(t, "testbed", "up", "--state-dir", dir, "--timeout", "1ms")
	if code != exitError || !strings.Contains(stderr, "not ready") || !strings.Contains(stderr, "log: ") {
		t.Errorf("up --timeout 1ms = exit %d, stderr %q; want 1, naming the part that was not ready and its log", code, stderr)
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after a failed up: %v", pids)
	}
}

func TestForegroundStopsEverythingOnCtrlC(t *testing.T) {
	localtest.Require(t)
	dir := stateDir(t)
	var out bytes.Buffer
	fg := exec.Command(localtest.Binary(), "testbed", "up", "--foreground", "--state-dir", dir, "--replicas", "1", "--items", "10")
	fg.Stdout, fg.Stderr = &out, &out
	if err := fg.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- fg.Wait() }()

	var st testbed.Status
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		if st, err = local.ReadStatus(dir); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("foreground up exited before it was ready: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("testbed not ready within 30s: %v\n%s", err, out.String())
		}
	}
	if err := fg.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("foreground up after Ctrl-C: %v; want exit 0\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("foreground up still running 30s after Ctrl-C\n%s", out.String())
	}
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left after Ctrl-C: %v", pids)
	}
	for name, pid := range st.PIDs {
		if name != "supervisor" && name != "toxiproxy" && running(pid) {
			t.Errorf("%s (pid %d) still running after Ctrl-C", name, pid)
		}
	}
}
