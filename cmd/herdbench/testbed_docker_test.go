package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed"
)

// fakeDockerScript records each call and answers compose for a healthy
// project whose ps output is in $FAKE_DIR/ps.json.
const fakeDockerScript = `#!/bin/bash
echo "$(basename "$0") $*" >> "$FAKE_DIR/calls"
[[ $1 == compose ]] || exit 3
for a in "$@"; do
  case $a in
    version) echo "2.29.7"; exit 0;;
    config) printf 'api-1\napi-2\napi-3\nredis\npostgres\ntoxiproxy\n'; exit 0;;
    ps) cat "$FAKE_DIR/ps.json"; exit 0;;
    up|down|restart) exit 0;;
  esac
done
`

// withFakeDocker returns an environment whose PATH starts with a fake
// docker, and the file its calls are recorded in.
func withFakeDocker(t *testing.T) (env []string, calls string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(fakeDockerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	var ps bytes.Buffer
	for name, port := range map[string][2]int{"api-1": {8080, 18081}, "api-2": {8080, 18082}, "api-3": {8080, 18083},
		"redis": {6379, 16379}, "postgres": {5432, 15432}, "toxiproxy": {8474, 18474}} {
		fmt.Fprintf(&ps, `{"Service":%q,"State":"running","Health":"healthy","Publishers":[{"URL":"127.0.0.1","TargetPort":%d,"PublishedPort":%d}]}`+"\n",
			name, port[0], port[1])
	}
	if err := os.WriteFile(filepath.Join(dir, "ps.json"), ps.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_DIR="+dir), filepath.Join(dir, "calls")
}

func TestDockerProviderUpStatusDown(t *testing.T) {
	env, calls := withFakeDocker(t)
	dir := t.TempDir()
	composeFile, _ := filepath.Abs("../../docker-compose.yml")
	code, stdout, stderr := herdbenchEnv(t, env, "testbed", "up", "--provider", "docker", "--state-dir", dir, "--compose-file", composeFile, "--json")
	var st testbed.Status
	if err := json.Unmarshal([]byte(stdout), &st); code != exitOK || err != nil {
		t.Fatalf("testbed up --provider docker = exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if st.Provider != "docker" || len(st.API) != 3 || st.API[0] != "http://127.0.0.1:18081" || st.Toxiproxy != "http://127.0.0.1:18474" {
		t.Errorf("up --json = %+v; want the docker provider's endpoints", st)
	}
	// status and down find the docker testbed by themselves
	code, stdout, _ = herdbenchEnv(t, env, "testbed", "status", "--state-dir", dir)
	if code != exitOK || !strings.Contains(stdout, "provider  ") || !strings.Contains(stdout, "docker") || !strings.Contains(stdout, "redis://127.0.0.1:16379") {
		t.Errorf("testbed status = exit %d:\n%s\nwant the docker testbed", code, stdout)
	}
	if code, _, stderr := herdbenchEnv(t, env, "testbed", "status", "--provider", "local", "--state-dir", dir); code != exitError || !strings.Contains(stderr, "no testbed is running") {
		t.Errorf("testbed status --provider local = exit %d, %q; want 1, no local testbed", code, stderr)
	}
	// the replicas' start-up flags belong to docker-compose.yml
	code, _, stderr = herdbenchEnv(t, env, "testbed", "up", "--provider", "docker", "--state-dir", t.TempDir(), "--compose-file", composeFile, "--strategy", "lock")
	if code != exitUsage || !strings.Contains(stderr, "--strategy: the docker provider runs the replicas docker-compose.yml defines") {
		t.Errorf("up --provider docker --strategy lock = exit %d, %q; want 2 naming --strategy", code, stderr)
	}
	code, stdout, stderr = herdbenchEnv(t, env, "testbed", "down", "--state-dir", dir)
	if code != exitOK || !strings.Contains(stdout, "docker compose down") {
		t.Errorf("testbed down = exit %d\n%s%s; want the docker testbed stopped", code, stdout, stderr)
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	base := "docker compose -f " + composeFile + " -p herdbench "
	for _, want := range []string{base + "up -d --build --remove-orphans", base + "ps -a --format json", base + "down -v --remove-orphans"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("docker calls:\n%s\nwant %q", b, want)
		}
	}
	if strings.Contains(string(b), "--strategy") || strings.Count(string(b), " up -d") != 1 {
		t.Errorf("docker calls:\n%s\nwant one up, and nothing from the refused one", b)
	}
}

func TestProviderFlagIsChecked(t *testing.T) {
	for _, args := range [][]string{
		{"testbed", "up", "--provider", "k8s"},
		{"testbed", "status", "--provider", "k8s"},
		{"testbed", "down", "--provider", "k8s"},
	} {
		code, _, stderr := herdbench(t, append(args, "--state-dir", t.TempDir())...)
		if code != exitUsage || !strings.Contains(stderr, `--provider: unknown "k8s" (accepted: auto, local, docker)`) {
			t.Errorf("herdbench %s = exit %d, %q; want 2 naming --provider and the accepted values", strings.Join(args, " "), code, stderr)
		}
	}
}

func TestDockerProviderNeedsTheComposeFile(t *testing.T) {
	env, _ := withFakeDocker(t)
	code, _, stderr := herdbenchEnv(t, env, "testbed", "up", "--provider", "docker", "--state-dir", t.TempDir(), "--compose-file", filepath.Join(t.TempDir(), "missing.yml"))
	if code != exitUsage || !strings.Contains(stderr, "--compose-file") || !strings.Contains(stderr, "missing.yml") {
		t.Errorf("up --provider docker without a compose file = exit %d, %q; want 2 naming the flag and the file", code, stderr)
	}
}
