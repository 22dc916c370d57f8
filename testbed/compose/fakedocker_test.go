package compose

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDocker is a `docker` (and `docker-compose`) on PATH that records its
// arguments, one call a line, and answers compose as a project would: ps
// answers ps-N.json on its Nth call, else ps.json.
type fakeDocker struct {
	dir  string // where the script reads its answers and writes calls
	file string // a compose file to name
}

const fakeScript = `#!/bin/bash
name=$(basename "$0")
echo "${HERDBENCH_CACHE:+HERDBENCH_CACHE=$HERDBENCH_CACHE HERDBENCH_MEMCACHED=$HERDBENCH_MEMCACHED }${HERDBENCH_DB:+HERDBENCH_DB=$HERDBENCH_DB HERDBENCH_DB_FLAG=$HERDBENCH_DB_FLAG HERDBENCH_DB_DSN=$HERDBENCH_DB_DSN }$name $*" >> "$FAKE_DIR/calls"
args=("$@")
if [[ $name == docker ]]; then
  [[ $1 == compose ]] || { echo "fake docker: only compose" >&2; exit 3; }
  if [[ -e $FAKE_DIR/no-plugin ]]; then echo "docker: 'compose' is not a docker command." >&2; exit 1; fi
  args=("${@:2}")
fi
sub=""
for a in "${args[@]}"; do
  case $a in version|config|up|ps|down|restart|logs) sub=$a; break;; esac
done
if [[ -e $FAKE_DIR/fail-$sub ]]; then echo "fake $sub failed" >&2; exit 1; fi
case $sub in
  version) if [[ -e $FAKE_DIR/v1 && $name == docker-compose ]]; then echo "1.29.2"; else echo "2.29.7"; fi;;
  restart)
    after=0
    for a in "${args[@]}"; do
      if [[ $after == 1 ]]; then touch "$FAKE_DIR/restarted-$a"; fi
      if [[ $a == restart ]]; then after=1; fi
    done;;
  config) cat "$FAKE_DIR/services";;
  down) touch "$FAKE_DIR/downed";;
  ps)
    # after a down, the project holds no container, as the engine says
    if [[ -e $FAKE_DIR/downed && " ${args[*]} " == *" -q "* ]]; then exit 0; fi
    n=$(( $(cat "$FAKE_DIR/ps-count" 2>/dev/null || echo 0) + 1 ))
    echo $n > "$FAKE_DIR/ps-count"
    if [[ -e $FAKE_DIR/ps-$n.json ]]; then cat "$FAKE_DIR/ps-$n.json"; else cat "$FAKE_DIR/ps.json"; fi;;
esac
`

// newFakeDocker puts a fake docker (and, when standalone, a fake
// docker-compose instead of the plugin) first on PATH, answering for
// services.
func newFakeDocker(t *testing.T, services []string, names ...string) *fakeDocker {
	t.Helper()
	f := &fakeDocker{dir: t.TempDir()}
	bin := filepath.Join(f.dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		names = []string{"docker"}
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(bin, n), []byte(fakeScript), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// only the fake and the tools its script runs: a real docker-compose
	// on the machine must not answer for it
	tools := filepath.Join(f.dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "basename", "cat", "touch"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("the fake docker needs %s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(tools, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+tools)
	t.Setenv("FAKE_DIR", f.dir)
	f.write(t, "services", strings.Join(services, "\n")+"\n")
	f.ps(t, "ps.json", healthy(services, nil))
	f.file = filepath.Join(t.TempDir(), "docker-compose.yml")
	f.write(t, f.file, "services: {}\n")
	saved := pollInterval
	pollInterval = 10 * time.Millisecond
	t.Cleanup(func() { pollInterval = saved })
	return f
}

func (f *fakeDocker) write(t *testing.T, name, content string) {
	t.Helper()
	if !filepath.IsAbs(name) {
		name = filepath.Join(f.dir, name)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ps makes ps answer cs, one JSON object a line (compose 2.21 on).
func (f *fakeDocker) ps(t *testing.T, name string, cs []container) {
	t.Helper()
	var b strings.Builder
	for _, c := range cs {
		line, _ := json.Marshal(c)
		b.Write(line)
		b.WriteByte('\n')
	}
	f.write(t, name, b.String())
}

// calls are the recorded command lines, the fake's directory shown as DIR
// and the compose file as FILE.
func (f *fakeDocker) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "calls"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, strings.ReplaceAll(l, f.file, "FILE"))
		}
	}
	return out
}

func (f *fakeDocker) reset(t *testing.T) {
	t.Helper()
	_ = os.Remove(filepath.Join(f.dir, "calls"))
	_ = os.Remove(filepath.Join(f.dir, "ps-count"))
}

// ports are the published ports of docker-compose.yml's services.
var ports = map[string][2]int{
	"api-1": {8080, 18081}, "api-2": {8080, 18082}, "api-3": {8080, 18083},
	"redis": {6379, 16379}, "postgres": {5432, 15432}, "toxiproxy": {8474, 18474},
	"redis-exporter": {9121, 19121}, "postgres-exporter": {9187, 19187}, "memcached": {11211, 21211},
	"mariadb": {3306, 13306},
}

// healthy describes services as running and healthy, but for those in
// other, which have that state and health.
func healthy(services []string, other map[string][2]string) []container {
	var cs []container
	for _, s := range services {
		c := container{Service: s, State: "running", Health: "healthy"}
		if o, ok := other[s]; ok {
			c.State, c.Health = o[0], o[1]
		}
		if p, ok := ports[s]; ok {
			c.Publishers = []publisher{{URL: "127.0.0.1", TargetPort: p[0], PublishedPort: p[1]}}
		}
		cs = append(cs, c)
	}
	return cs
}

var core = []string{"api-1", "api-2", "api-3", "redis", "postgres", "toxiproxy"}
