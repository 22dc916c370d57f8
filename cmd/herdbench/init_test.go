package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// herdbench init writes a starter target file whose dry run passes as
// written, for a bare endpoint, one far away with its Redis and Postgres,
// and one with MySQL; it never overwrites a file unless told, and refuses
// what it cannot write from, naming the flag.
func TestInitWritesAFileWhoseDryRunPasses(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--url", "http://127.0.0.1:8080/items/{key}"},
		{"--url", "http://staging.internal:8080/p/{key}?v=1", "--redis", "10.0.0.7:6379", "--postgres", "10.0.0.8:5432"},
		{"--url", "https://127.0.0.1:8443/q?id={key}", "--redis", "127.0.0.1:6379", "--mysql", "127.0.0.1:3306"},
	} {
		file := filepath.Join(dir, "t"+string(rune('0'+i))+".yaml")
		code, stdout, stderr := herdbench(t, append([]string{"init", "--file", file}, args...)...)
		if code != exitOK || !strings.Contains(stdout, "next: herdbench stampede --target "+file+" --dry-run") {
			t.Fatalf("init %v = exit %d\n%s%s", args, code, stdout, stderr)
		}
		code, stdout, stderr = herdbench(t, "stampede", "--target", file, "--dry-run")
		if code != exitOK || !strings.Contains(stdout, "dry run: nothing was sent") {
			b, _ := os.ReadFile(file)
			t.Errorf("the dry run of init %v's file = exit %d\n%s%s\nthe file:\n%s", args, code, stdout, stderr, b)
		}
		if code, _, stderr := herdbench(t, append([]string{"init", "--file", file}, args...)...); code != exitUsage || !strings.Contains(stderr, "exists (accepted: a new file, or --force") {
			t.Errorf("init over an existing file = exit %d, %s; want exit 2, refused", code, stderr)
		}
		if code, _, stderr := herdbench(t, append([]string{"init", "--force", "--file", file}, args...)...); code != exitOK {
			t.Errorf("init --force = exit %d, %s; want it overwritten", code, stderr)
		}
	}
	code, _, stderr := herdbench(t, "init", "--url", "http://127.0.0.1:8080/items", "--redis", "nope", "--postgres", "127.0.0.1:5432",
		"--mysql", "127.0.0.1:3306", "--file", filepath.Join(dir, "bad.yaml"))
	for _, want := range []string{`--url: "http://127.0.0.1:8080/items" has no {key}`, `--redis: "nope" is not host:port`, "--mysql: beside --postgres"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("init with bad flags = exit %d; want 2 and %q in\n%s", code, want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.yaml")); err == nil {
		t.Error("init with bad flags wrote its file")
	}
}
