package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// itemRequests sums what the replicas served, from their own counters.
func itemRequests(t *testing.T, api []string) float64 {
	t.Helper()
	return apiCounter(t, api, "herdbench_api_requests_total", "")
}

// A target file on the testbed, as if herdbench had not started it: the
// safety rules hold before a single request, and a dry run sends nothing.
func TestTargetFileSafety(t *testing.T) {
	localtest.Require(t)
	dir := stateDir(t)
	if code, stdout, stderr := herdbench(t, "testbed", "up", "--state-dir", dir, "--replicas", "2", "--items", "500"); code != exitOK {
		t.Fatalf("testbed up = exit %d\n%s%s", code, stdout, stderr)
	}
	st, err := local.ReadStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := fmt.Sprintf(`endpoints: [%q, %q]
request: {path: "/items/{key}"}
keys: {range: {from: 1, to: 500}, hot: 50}
headers: {Authorization: "Bearer ${HB_STAGING_TOKEN}"}
redis: {address: %q, key: "item:{key}", pattern: "item:*"}
limits: {max_rate: 400}
`, st.API[0], st.API[1], strings.TrimPrefix(st.Redis, "redis://"))
	local := write("local.yaml", base+"arms: [{name: none}, {name: lock, headers: {X-Herdbench-Strategy: lock}}]\n")
	remote := write("remote.yaml", strings.Replace(base, st.API[1], "http://10.255.255.1:8080", 1))
	t.Setenv("HB_STAGING_TOKEN", "tok-123")
	before := itemRequests(t, st.API)

	for _, tt := range []struct {
		name       string
		args       []string
		unset      []string // environment variables to leave out
		want       int
		wantStdout []string
		wantStderr string
	}{
		{"dry run", []string{"--target", local, "--dry-run", "--rate", "300"}, nil, exitOK,
			[]string{"dry run: nothing was sent", "load      150 req/s to " + st.API[0], "arm       lock: headers X-Herdbench-Strategy: lock",
				"trigger   expire at T: UNLINK 50 Redis keys (the hot keys matching item:*): item:1, item:2,", "request   GET /items/{key}, headers Authorization (values not shown)"}, ""},
		{"a host not allowed", []string{"--target", remote, "--rate", "300"}, nil, exitUsage, nil,
			"remote.yaml:1: endpoints[1]: host 10.255.255.1 is not loopback and not allowed (accepted: loopback; or list it under allow: in the target file, or --allow-host 10.255.255.1)"},
		{"allowed, but no terminal to ask on", []string{"--target", remote, "--rate", "300", "--allow-host", "10.255.255.1"}, nil, exitUsage, nil,
			"--yes: not given, and there is no terminal to ask on: refusing to send 300 req/s"},
		{"allowed, dry run", []string{"--target", remote, "--rate", "300", "--allow-host", "10.255.255.1", "--dry-run"}, nil, exitOK,
			[]string{"load      150 req/s to http://10.255.255.1:8080", "touches   10.255.255.1 (endpoints[1])"}, ""},
		{"over the target's cap", []string{"--target", local, "--rate", "1000", "--dry-run"}, nil, exitUsage, nil,
			"--rate: 1000 requests/s is over the target's cap of 400 (limits.max_rate, " + local + ":6: limits; accepted: 1 to 400)"},
		{"retries over the target's cap", []string{"--target", local, "--rate", "200", "--retry", "immediate:3", "--dry-run"}, nil, exitUsage, nil,
			"--rate: 200 requests/s with up to 4 attempts each can send 800/s, over the target's cap of 400"},
		{"a burst over the target's cap", []string{"--target", local, "--rate", "100", "--trigger", "burst", "--burst", "1000", "--dry-run"}, nil, exitUsage, nil,
			"--burst: 1000 requests at once is over the target's cap of 400 requests/s"},
		{"a trigger the target cannot run", []string{"--target", local, "--trigger", "slowdb", "--dry-run"}, nil, exitUsage, nil,
			"trigger slowdb needs toxiproxy in front of postgres (toxiproxy.proxies.postgres in the target file)"},
		{"an arm the file does not declare", []string{"--target", local, "--arms", "none,swr", "--dry-run"}, nil, exitUsage, nil,
			`--arms: swr: not an arm of ` + local + ` (accepted: none, lock, baseline, or a client policy:`},
		{"a gate on what the target does not show", []string{"--target", local, "--gate", "db.queries < 10", "--dry-run"}, nil, exitUsage, nil,
			`--gate: "db.queries < 10": db.queries names postgres, which ` + local + ` does not let herdbench observe`},
		{"a secret missing (the run; a dry run lists it as needed)", []string{"--target", local, "--yes"}, []string{"HB_STAGING_TOKEN"}, exitUsage, nil,
			"local.yaml:4: headers.Authorization: environment variable HB_STAGING_TOKEN is not set"},
		{"a bare URL", []string{"--target", st.API[0] + "/items/{key}", "--trigger", "expire", "--dry-run"}, nil, exitUsage, nil,
			"trigger expire needs a Redis"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"stampede", "--state-dir", t.TempDir(), "--results-dir", t.TempDir()}, tt.args...)
			code, stdout, stderr := herdbenchEnv(t, clitest.Environ(tt.unset), args...)
			if code != tt.want || !strings.Contains(stderr, tt.wantStderr) {
				t.Fatalf("stampede %s = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, stderr with %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.want, tt.wantStderr)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if strings.Contains(stdout+stderr, "tok-123") {
				t.Errorf("the secret shows in the output:\n%s%s", stdout, stderr)
			}
		})
	}
	// a scenario file picks the target file's arms by name; --arms over it
	scen := write("s.yaml", "target: "+local+"\narms: [lock]\nload: {rate: 100}\n")
	for _, tt := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"run", scen, "--dry-run"}, "arm       lock: headers X-Herdbench-Strategy", "arm       none"},
		{[]string{"run", scen, "--dry-run", "--arms", "none"}, "arm       none: as the service is", "arm       lock"},
	} {
		code, stdout, stderr := herdbench(t, tt.args...)
		if code != exitOK || !strings.Contains(stdout, tt.want) || strings.Contains(stdout, tt.not) {
			t.Errorf("herdbench %s = exit %d\n%s%s\nwant %q and not %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.want, tt.not)
		}
	}

	// nothing above sent a request: the replicas count none
	if after := itemRequests(t, st.API); after != before {
		t.Errorf("the replicas served %v item requests during dry runs and refusals; want none", after-before)
	}

	// and a real run goes to the service, arm by arm, sending what its dry
	// run said it would, as the replicas count it
	localtest.Measures(t)
	out := t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	run := []string{"stampede", "--target", local, "--rate", "100", "--warmup", "200ms", "--before", "1s", "--after", "1s", "--seed", "4"}
	code, stdout, stderr := herdbench(t, append(run, "--dry-run")...)
	var planned int
	if _, err := fmt.Sscanf(stdout[strings.Index(stdout, "total     "):], "total     %d requests", &planned); code != exitOK || err != nil {
		t.Fatalf("dry run = exit %d, total %v\n%s%s", code, err, stdout, stderr)
	}
	served0 := itemRequests(t, st.API)
	code, stdout, stderr = herdbench(t, append(run, "--results-dir", out, "-o", "table", "-o", "json="+jsonFile)...)
	if code != exitOK {
		t.Fatalf("stampede on the target file = exit %d\n%s%s", code, stdout, stderr)
	}
	if served := itemRequests(t, st.API) - served0; math.Abs(served-float64(planned)) > float64(planned)/50 {
		t.Errorf("the replicas served %v requests; the dry run said about %d", served, planned)
	}
	rep := readResults(t, jsonFile)
	if rep.Environment.Target != local || len(rep.Arms) != 2 || rep.Arms[1].Name != "lock" || rep.Arms[1].Select == nil || rep.Arms[0].API != nil {
		t.Errorf("results: target %q, arms %d; want the file's two arms, selected on the service, without replica counters", rep.Environment.Target, len(rep.Arms))
	}
	if served := itemRequests(t, st.API) - before; served < 200 {
		t.Errorf("the replicas served %v requests; want the run's", served)
	}
	b, _ := os.ReadFile(jsonFile)
	if strings.Contains(string(b)+stdout+stderr, "tok-123") {
		t.Error("the secret shows in the results or the output")
	}
}

// examples/staging.yaml describes a service far away: it checks out, and a
// dry run of it says what it would touch, with nothing sent.
func TestStagingExample(t *testing.T) {
	env := append(clitest.Environ(nil), "STAGING_TOKEN=t0k", "STAGING_PG_DSN=postgres://catalog@pg.staging.internal/catalog")
	code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", "../../examples/staging.yaml", "--dry-run",
		"--arms", "none,lock", "--rate", "200", "--state-dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("dry run of examples/staging.yaml = exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"load      100 req/s to http://catalog-1.staging.internal:8080",
		"request   GET /v1/products/{key}?fields=summary, headers Authorization (values not shown)",
		"arm       lock: before: ./flags set catalog.cache_lock on; after: ./flags set catalog.cache_lock off",
		"UNLINK 100 Redis keys (the hot keys matching product:*): product:1, product:2",
		"stop on   http.drop_rate > 20%; http.p99_ms > 2000", "pg.staging.internal (postgres.dsn)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "t0k") {
		t.Error("the dry run shows the secret")
	}
	// over its cap, it is refused
	code, _, stderr = herdbenchEnv(t, env, "stampede", "--target", "../../examples/staging.yaml", "--dry-run", "--rate", "1000", "--state-dir", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "is over the target's cap of 300") {
		t.Errorf("examples/staging.yaml at 1000 req/s = exit %d, %s; want exit 2 naming the cap", code, stderr)
	}
}
