package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

func TestFindCommand(t *testing.T) {
	t.Run("plugin", func(t *testing.T) {
		f := newFakeDocker(t, core)
		cmd, err := FindCommand(context.Background())
		if err != nil || len(cmd) != 2 || filepath.Base(cmd[0]) != "docker" || cmd[1] != "compose" {
			t.Errorf("FindCommand() = %q, %v; want [docker compose]", cmd, err)
		}
		if got, want := f.calls(t), []string{"docker compose version --short"}; !slices.Equal(got, want) {
			t.Errorf("calls = %q; want %q", got, want)
		}
	})
	t.Run("standalone", func(t *testing.T) {
		f := newFakeDocker(t, core, "docker", "docker-compose")
		f.write(t, "no-plugin", "")
		cmd, err := FindCommand(context.Background())
		if err != nil || len(cmd) != 1 || filepath.Base(cmd[0]) != "docker-compose" {
			t.Errorf("FindCommand() without the plugin = %q, %v; want [docker-compose]", cmd, err)
		}
		if got, want := f.calls(t), []string{"docker compose version --short", "docker-compose version --short"}; !slices.Equal(got, want) {
			t.Errorf("calls = %q; want %q", got, want)
		}
	})
	t.Run("only Compose v1", func(t *testing.T) {
		f := newFakeDocker(t, core, "docker", "docker-compose")
		f.write(t, "no-plugin", "")
		f.write(t, "v1", "")
		_, err := FindCommand(context.Background())
		var nc *NoComposeError
		if !errors.As(err, &nc) || !strings.Contains(err.Error(), "`docker-compose version`: 1.29.2 is Compose v1, too old (herdbench needs 2.0 or later)") ||
			!strings.Contains(err.Error(), "install-compose.sh") {
			t.Errorf("FindCommand() with docker-compose 1.29.2 only = %v; want it refused by version, and what to install", err)
		}
	})
	t.Run("neither", func(t *testing.T) {
		f := newFakeDocker(t, core)
		f.write(t, "no-plugin", "")
		_, err := FindCommand(context.Background())
		var nc *NoComposeError
		if !errors.As(err, &nc) || !strings.Contains(err.Error(), "'compose' is not a docker command") ||
			!strings.Contains(err.Error(), "docker-compose: not on PATH") || !strings.Contains(err.Error(), "docker-compose-plugin") {
			t.Errorf("FindCommand() with neither = %v; want a NoComposeError saying what was tried and what to install", err)
		}
	})
}

func TestUpWaitsForHealthAndDescribesTheTestbed(t *testing.T) {
	f := newFakeDocker(t, core)
	// the first two looks find api-2 starting, then postgres not yet created
	f.ps(t, "ps-1.json", healthy(core, map[string][2]string{"api-2": {"running", "starting"}}))
	f.ps(t, "ps-2.json", healthy(core[:4], nil))
	dir := t.TempDir()
	st, err := Up(context.Background(), Config{StateDir: dir, File: f.file})
	if err != nil {
		t.Fatal(err)
	}
	base := "docker compose -f FILE -p herdbench "
	want := []string{
		"docker compose version --short",
		base + "config --services",
		base + "up -d --build --remove-orphans",
		base + "ps -a --format json",
		base + "ps -a --format json",
		base + "ps -a --format json",
		base + "version --short",
	}
	if got := f.calls(t); !slices.Equal(got, want) {
		t.Errorf("calls =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.Provider != "docker" || !slices.Equal(st.API, []string{"http://127.0.0.1:18081", "http://127.0.0.1:18082", "http://127.0.0.1:18083"}) ||
		st.Redis != "redis://127.0.0.1:16379" || st.Postgres != "postgres://herdbench@127.0.0.1:15432/herdbench?sslmode=disable" ||
		st.Toxiproxy != "http://127.0.0.1:18474" || st.Proxies["redis"] != "toxiproxy:6379" || st.StateDir != dir ||
		st.Versions["compose"] != "2.29.7" || st.Prometheus != "" || st.Grafana != "" {
		t.Errorf("status = %+v; want the published loopback ports of every part, no observability", st)
	}
	// another process reads the same status
	got, err := ReadStatus(context.Background(), dir)
	if err != nil || !slices.Equal(got.API, st.API) || got.Redis != st.Redis {
		t.Errorf("ReadStatus = %+v, %v; want %+v", got, err, st)
	}
	// a second up says so and starts nothing
	f.reset(t)
	_ = os.Remove(filepath.Join(f.dir, "ps-1.json"))
	_ = os.Remove(filepath.Join(f.dir, "ps-2.json"))
	if _, err := Up(context.Background(), Config{StateDir: dir, File: f.file}); !errors.Is(err, ErrRunning) {
		t.Errorf("second Up = %v; want ErrRunning", err)
	}
	for _, c := range f.calls(t) {
		if strings.Contains(c, " up ") || strings.Contains(c, " down") {
			t.Errorf("second Up ran %q; want nothing started or stopped", c)
		}
	}
}

func TestUpWithObservabilityUsesTheProfile(t *testing.T) {
	all := append(slices.Clone(core), "redis-exporter", "postgres-exporter", "prometheus", "grafana")
	f := newFakeDocker(t, all)
	st, err := Up(context.Background(), Config{StateDir: t.TempDir(), File: f.file, Observability: true, Project: "hb"})
	if err != nil {
		t.Fatal(err)
	}
	calls := f.calls(t)
	if want := "docker compose -f FILE -p hb --profile observability up -d --build --remove-orphans"; !slices.Contains(calls, want) {
		t.Errorf("calls = %q; want %q", calls, want)
	}
	if st.Prometheus != "http://127.0.0.1:19090" || st.Harness != "127.0.0.1:19465" || st.Grafana != "http://127.0.0.1:13000" {
		t.Errorf("status prometheus %q, harness %q, grafana %q; want the compose file's", st.Prometheus, st.Harness, st.Grafana)
	}
}

// Where Grafana's image cannot be had, up names every other service and
// waits for those; the status names no Grafana.
func TestUpWithoutGrafana(t *testing.T) {
	all := append(slices.Clone(core), "redis-exporter", "postgres-exporter", "prometheus", "grafana")
	f := newFakeDocker(t, all)
	f.ps(t, "ps.json", healthy(all[:len(all)-1], nil))
	st, err := Up(context.Background(), Config{StateDir: t.TempDir(), File: f.file, Observability: true, NoGrafana: true, Project: "hb"})
	if err != nil {
		t.Fatal(err)
	}
	want := "docker compose -f FILE -p hb --profile observability up -d --build --remove-orphans " + strings.Join(all[:len(all)-1], " ")
	if calls := f.calls(t); !slices.Contains(calls, want) {
		t.Errorf("calls = %q; want %q", calls, want)
	}
	if st.Prometheus == "" || st.Grafana != "" {
		t.Errorf("status prometheus %q, grafana %q; want Prometheus and no Grafana", st.Prometheus, st.Grafana)
	}
}

func TestUpTearsDownWhatFailed(t *testing.T) {
	f := newFakeDocker(t, core)
	f.ps(t, "ps.json", healthy(core, map[string][2]string{"postgres": {"running", "unhealthy"}}))
	dir := t.TempDir()
	_, err := Up(context.Background(), Config{StateDir: dir, File: f.file})
	if err == nil || !strings.Contains(err.Error(), "service postgres is running (unhealthy)") ||
		!strings.Contains(err.Error(), "docker compose -f "+f.file+" -p herdbench logs postgres") {
		t.Errorf("Up with postgres unhealthy = %v; want an error naming postgres and how to read its logs", err)
	}
	calls := f.calls(t)
	if n := len(calls); n < 2 || calls[n-2] != "docker compose -f FILE -p herdbench down -v --remove-orphans" ||
		calls[n-1] != "docker compose -f FILE -p herdbench ps -a -q" {
		t.Errorf("last calls = %q; want down -v --remove-orphans, then ps -a -q finding nothing left", calls[max(0, len(calls)-2):])
	}
	if Recorded(dir) {
		t.Errorf("a failed Up left its state file")
	}

	// a failing up itself: its output is in the error
	f.reset(t)
	f.write(t, "fail-up", "")
	if _, err := Up(context.Background(), Config{StateDir: dir, File: f.file}); err == nil || !strings.Contains(err.Error(), "fake up failed") {
		t.Errorf("Up when compose up fails = %v; want compose's output in the error", err)
	}

	// a health wait that runs out names who was not ready
	f.reset(t)
	_ = os.Remove(filepath.Join(f.dir, "fail-up"))
	f.ps(t, "ps.json", healthy(core, map[string][2]string{"api-3": {"running", "starting"}}))
	_, err = Up(context.Background(), Config{StateDir: dir, File: f.file, ReadyTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not healthy") || !strings.Contains(err.Error(), "api-3 running (starting)") {
		t.Errorf("Up with api-3 never healthy = %v; want a timeout naming api-3", err)
	}
}

func TestUpNeedsTheComposeFile(t *testing.T) {
	newFakeDocker(t, core)
	_, err := Up(context.Background(), Config{StateDir: t.TempDir(), File: filepath.Join(t.TempDir(), "nope.yml")})
	if err == nil || !strings.Contains(err.Error(), "compose file") || !strings.Contains(err.Error(), "repository's root") {
		t.Errorf("Up without a compose file = %v; want an error saying where to run it", err)
	}
}

func TestRestartStatusDown(t *testing.T) {
	f := newFakeDocker(t, core)
	dir := t.TempDir()
	if _, err := Up(context.Background(), Config{StateDir: dir, File: f.file}); err != nil {
		t.Fatal(err)
	}
	base := "docker compose -f FILE -p herdbench "
	tests := []struct {
		part    string
		rolling bool
		want    []string // restart calls
	}{
		{"api", false, []string{base + "restart api-1 api-2 api-3"}},
		{"api", true, []string{base + "restart api-1", base + "restart api-2", base + "restart api-3"}},
		{"redis", false, []string{base + "restart redis"}},
		{"postgres", true, []string{base + "restart postgres"}},
		{"api-2", false, []string{base + "restart api-2"}}, // one replica's herd: the others serve on
		{"api-1,api-3", false, []string{base + "restart api-1 api-3"}},
		{"api-3,api-1", true, []string{base + "restart api-1", base + "restart api-3"}}, // in the testbed's order
	}
	for _, tt := range tests {
		f.reset(t)
		// each restarted service comes back starting, then healthy
		f.ps(t, "ps-1.json", healthy(core, map[string][2]string{"redis": {"restarting", ""}, "api-1": {"running", "starting"}}))
		got, err := Restart(context.Background(), dir, tt.part, tt.rolling)
		if err != nil {
			t.Fatalf("Restart(%s, rolling %v) = %v", tt.part, tt.rolling, err)
		}
		var restarts []string
		psAfter := 0
		for _, c := range f.calls(t) {
			if strings.Contains(c, " restart ") {
				restarts = append(restarts, c)
			} else if strings.Contains(c, " ps ") && len(restarts) > 0 {
				psAfter++
			}
		}
		if !slices.Equal(restarts, tt.want) || psAfter < len(tt.want) {
			t.Errorf("Restart(%s, rolling %v) ran %q with %d health checks after; want %q, each followed by one", tt.part, tt.rolling, restarts, psAfter, tt.want)
		}
		wantNames := herd.PartNames(tt.part)
		slices.Sort(wantNames)
		if tt.part == "api" {
			wantNames = []string{"api-1", "api-2", "api-3"}
		}
		if !slices.Equal(got, wantNames) {
			t.Errorf("Restart(%s) restarted %q; want %q", tt.part, got, wantNames)
		}
	}
	if _, err := Restart(context.Background(), dir, "dns", false); err == nil || !strings.Contains(err.Error(), "accepted: api, redis, postgres") {
		t.Errorf("Restart(dns) = %v; want the accepted parts", err)
	}
	if _, err := Restart(context.Background(), dir, "api-4", false); err == nil || !strings.Contains(err.Error(), "unknown part") {
		t.Errorf("Restart(api-4) on 3 replicas = %v; want it refused", err)
	}
	// a service gone makes status say so
	_ = os.Remove(filepath.Join(f.dir, "ps-1.json"))
	f.ps(t, "ps.json", healthy(core, map[string][2]string{"toxiproxy": {"exited", ""}}))
	f.reset(t)
	if _, err := ReadStatus(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "toxiproxy exited") {
		t.Errorf("ReadStatus with toxiproxy exited = %v; want it named", err)
	}
	f.reset(t)
	if err := Down(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if got, want := f.calls(t), []string{base + "down -v --remove-orphans"}; !slices.Equal(got, want) {
		t.Errorf("Down calls = %q; want %q", got, want)
	}
	if _, err := ReadStatus(context.Background(), dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("ReadStatus after Down = %v; want ErrNotRunning", err)
	}
}

// Compose before 2.21 prints ps as one JSON array.
func TestPSReadsAnArray(t *testing.T) {
	f := newFakeDocker(t, core)
	b, _ := json.Marshal(healthy(core, map[string][2]string{"redis": {"exited", ""}}))
	f.write(t, "ps.json", string(b))
	st := state{Command: []string{"docker", "compose"}, File: f.file, Project: "herdbench"}
	cs, err := st.ps(context.Background())
	if err != nil || len(cs) != len(core) || cs["redis"].State != "exited" || cs["api-2"].Publishers[0].PublishedPort != 18082 {
		t.Errorf("ps of a JSON array = %+v, %v; want every service, redis exited", cs, err)
	}
}

// A restarted container forgets what PUT /admin/config set; Restart puts
// each replica's config and seed back, as the local supervisor starts a
// replica again with them.
func TestRestartKeepsTheReplicasConfigAndSeed(t *testing.T) {
	type seen struct {
		mu       sync.Mutex
		config   replica.Config
		seed     uint64
		restarts int
	}
	var replicas []*seen
	var urls []string
	cs := healthy(core, nil)
	for i := range 3 {
		r := &seen{config: replica.DefaultConfig, seed: uint64(100 + i)}
		r.config.Strategy = replica.Lock
		replicas = append(replicas, r)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.mu.Lock()
			defer r.mu.Unlock()
			// the fake docker marks a restart: the new process starts with
			// the defaults and the seed of its command line
			if err := os.Remove(filepath.Join(os.Getenv("FAKE_DIR"), fmt.Sprintf("restarted-api-%d", i+1))); err == nil {
				r.config, r.seed, r.restarts = replica.DefaultConfig, uint64(i+1), r.restarts+1
			}
			switch req.Method + " " + req.URL.Path {
			case "GET /admin/config":
				_ = json.NewEncoder(w).Encode(r.config)
			case "GET /healthz":
				_ = json.NewEncoder(w).Encode(admin.Health{Replica: fmt.Sprintf("api-%d", i+1), Seed: r.seed})
			case "PUT /admin/config":
				_ = json.NewDecoder(req.Body).Decode(&r.config)
			case "POST /admin/reset":
				var b struct{ Seed uint64 }
				_ = json.NewDecoder(req.Body).Decode(&b)
				r.seed = b.Seed
			}
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
		p, _ := strconv.Atoi(port)
		cs[i].Publishers = []publisher{{URL: "127.0.0.1", TargetPort: 8080, PublishedPort: p}}
	}
	f := newFakeDocker(t, core)
	f.ps(t, "ps.json", cs)
	dir := t.TempDir()
	if _, err := Up(context.Background(), Config{StateDir: dir, File: f.file}); err != nil {
		t.Fatal(err)
	}
	if _, err := Restart(context.Background(), dir, "api", true); err != nil {
		t.Fatal(err)
	}
	for i, r := range replicas {
		// what the replica answers now: a restart not yet seen shows here
		raw, err := admin.NewClient(urls[i]).Config(context.Background())
		c, _ := replica.ConfigOf(raw)
		if err != nil || c.Strategy != replica.Lock {
			t.Errorf("api-%d answers strategy %q, %v after the restart; want lock", i+1, c.Strategy, err)
		}
		r.mu.Lock()
		if r.restarts != 1 || r.config.Strategy != replica.Lock || r.seed != uint64(100+i) {
			t.Errorf("api-%d after %d restarts: strategy %q, seed %d; want one restart, then lock and %d put back",
				i+1, r.restarts, r.config.Strategy, r.seed, 100+i)
		}
		r.mu.Unlock()
	}
}
