package targets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/compose"
)

// A docker compose testbed has no supervisor: its parts restart through
// `docker compose restart`, recorded here by a fake docker.
func TestRestartGoesThroughComposeForDocker(t *testing.T) {
	bin := t.TempDir()
	script := `#!/bin/bash
echo "$*" >> "$FAKE_DIR/calls"
for a in "$@"; do
  case $a in
    version) echo 2.29.7; exit 0;;
    config) printf 'api-1\nredis\npostgres\ntoxiproxy\n'; exit 0;;
    ps) cat "$FAKE_DIR/ps.json"; exit 0;;
    up|restart|down) exit 0;;
  esac
done
`
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var ps strings.Builder
	for name, p := range map[string][2]int{"api-1": {8080, 18081}, "redis": {6379, 16379}, "postgres": {5432, 15432}, "toxiproxy": {8474, 18474}} {
		fmt.Fprintf(&ps, `{"Service":%q,"State":"running","Health":"healthy","Publishers":[{"URL":"127.0.0.1","TargetPort":%d,"PublishedPort":%d}]}`+"\n", name, p[0], p[1])
	}
	if err := os.WriteFile(filepath.Join(bin, "ps.json"), []byte(ps.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "docker-compose.yml")
	if err := os.WriteFile(file, []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("FAKE_DIR", bin)
	st, err := compose.Up(context.Background(), compose.Config{StateDir: t.TempDir(), File: file})
	if err != nil {
		t.Fatal(err)
	}
	got, err := (&Target{Status: st}).Restart(context.Background(), "redis", false)
	if err != nil || len(got) != 1 || got[0] != "redis" {
		t.Errorf("Restart(redis) = %v, %v; want [redis]", got, err)
	}
	calls, _ := os.ReadFile(filepath.Join(bin, "calls"))
	if want := "compose -f " + file + " -p herdbench restart redis\n"; !strings.Contains(string(calls), want) {
		t.Errorf("docker calls:\n%s\nwant %q", calls, want)
	}
}
