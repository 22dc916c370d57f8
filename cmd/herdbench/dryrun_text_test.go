package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dry run says what each request class sends and every host it
// touches, once: a class of vegeta targets by its targets (not an empty
// path), its host once however many targets it has; the testbed the run
// would start by its replicas' host.
func TestADryRunNamesEachClassAndHost(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("browse.targets", "GET http://127.0.0.1:8080/browse\n\nPOST http://127.0.0.1:8080/search\n\nGET http://127.0.0.1:8080/cart\n\nGET http://127.0.0.1:8080/help\n")
	write("t.yaml", `endpoints: [http://127.0.0.1:8080]
keys: {range: {from: 1, to: 10}}
requests:
  - {name: items, weight: 3, path: "/items/{key}"}
  - {name: browse, weight: 1, vegeta: browse.targets}
`)
	code, stdout, stderr := herdbench(t, "stampede", "--dry-run", "--target", filepath.Join(dir, "t.yaml"), "--trigger", "burst", "--rate", "100")
	if code != exitOK {
		t.Fatalf("dry run = exit %d: %s", code, stderr)
	}
	want := "browse: 25% of the rate, 25 req/s; 4 vegeta targets, taken in turn: GET http://127.0.0.1:8080/browse, " +
		"POST http://127.0.0.1:8080/search, GET http://127.0.0.1:8080/cart, and 1 more; no key: each target as its file writes it"
	if !strings.Contains(stdout, want) || strings.Contains(stdout, "GET ;") {
		t.Errorf("dry run:\n%s\nwant the vegeta class as %q, never an empty path", stdout, want)
	}
	if n := strings.Count(stdout, "touches   127.0.0.1 (requests[1].vegeta (browse.targets))"); n != 1 {
		t.Errorf("dry run:\n%s\nsays the vegeta class's host %d times; want once", stdout, n)
	}

	code, stdout, stderr = herdbench(t, "stampede", "--dry-run", "--state-dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("testbed dry run = exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "touches   127.0.0.1 (testbed api)") || strings.Contains(stdout, "touches   (") {
		t.Errorf("testbed dry run:\n%s\nwant its replicas' host: touches   127.0.0.1 (testbed api)", stdout)
	}
}

// A stop condition --abort-on gives that the target file's abort: has too
// (the README's staging run) is one condition: the dry run lists it once
// and says it was merged, naming the file's line.
func TestADryRunMergesAStopConditionGivenTwice(t *testing.T) {
	env := []string{"STAGING_TOKEN=token", "STAGING_PG_DSN=postgres://catalog@pg.staging.internal/catalog"}
	code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", "../../examples/staging.yaml", "--arms", "none,lock",
		"--abort-on", "http.drop_rate > 20%", "--dry-run", "--state-dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("dry run = exit %d: %s%s", code, stdout, stderr)
	}
	want := "stop on   http.drop_rate > 20%; http.p99_ms > 2000\n" +
		`          ../../examples/staging.yaml's abort[0] (line 87) is --abort-on's "http.drop_rate > 20%": kept once` + "\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("dry run:\n%s\nwant the stop conditions once each, the merge said:\n%s", stdout, want)
	}
}

// A target file's limits.max_drain is in the dry run's caps: the most an
// arm's drain waits, no shorter than the clients' whole deadline
// (--timeout 2s, three attempts, and 1s of backoff: 7s).
func TestADryRunSaysTheDrainsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(path, []byte(targetFile+"limits: {max_drain: 7s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := herdbench(t, "stampede", "--dry-run", "--target", path, "--trigger", "burst", "--timeout", "2s", "--retry", "fixed:500ms:2")
	if want := "caps      the target's: 7s a drain; herdbench's"; code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("dry run = exit %d:\n%s%s\nwant a max_drain as long as the deadline taken, and said: %q", code, stdout, stderr, want)
	}
}
