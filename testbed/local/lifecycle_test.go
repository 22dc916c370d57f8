package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// ports lists every port a testbed status names.
func statusPorts(t *testing.T, urls ...string) []string {
	t.Helper()
	var ports []string
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || p.Port() == "" {
			t.Fatalf("status URL %q has no port", u)
		}
		ports = append(ports, p.Port())
	}
	return ports
}

// assertGone checks that nothing of the testbed in dir still runs, listens
// or stores data.
func assertGone(t *testing.T, dir string, ports []string) {
	t.Helper()
	if pids := Processes(dir); len(pids) > 0 {
		t.Errorf("processes still running in %s: %v", dir, pids)
	}
	for _, p := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Errorf("port %s still taken: %v", p, err)
			continue
		}
		l.Close()
	}
	for _, name := range []string{"redis", "postgres", "state.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left in the state dir (stat: %v)", name, err)
		}
	}
}

func TestStartServesTheStatusContractAndStopLeavesNothing(t *testing.T) {
	requireBinaries(t)
	dir := stateDir(t)
	ctx := context.Background()
	tb, err := Start(ctx, Config{StateDir: dir, Binary: binary, Replicas: 2, Items: 50})
	if err != nil {
		t.Fatal(err)
	}
	st := tb.Status()
	t.Cleanup(tb.Stop)

	if st.Provider != "local" || st.StateDir != dir || len(st.API) != 2 {
		t.Errorf("status = %+v; want provider local, state_dir %s, 2 api URLs", st, dir)
	}
	for _, name := range []string{"supervisor", "redis", "postgres", "toxiproxy", "api-1", "api-2"} {
		if st.PIDs[name] == 0 {
			t.Errorf("status pids has no %s: %v", name, st.PIDs)
		}
	}
	for _, name := range []string{"redis", "postgres", "toxiproxy"} {
		if st.Versions[name] == "" {
			t.Errorf("status versions has no %s: %v", name, st.Versions)
		}
	}
	for name, path := range st.Logs {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("log of %s: %v", name, err)
		}
	}
	// every endpoint answers as the contract says
	opt, err := redis.ParseURL(st.Redis)
	if err != nil {
		t.Fatalf("redis URL %q: %v", st.Redis, err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Errorf("PING %s: %v", st.Redis, err)
	}
	conn, err := pgx.Connect(ctx, st.Postgres)
	if err != nil {
		t.Fatalf("connect %s: %v", st.Postgres, err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_statements").Scan(&n); err != nil {
		t.Errorf("read pg_stat_statements with %s: %v", st.Postgres, err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil || n != 50 {
		t.Errorf("items = %d (%v); want 50 seeded", n, err)
	}
	conn.Close(ctx)
	proxies, err := toxiclient.NewClient(st.Toxiproxy).Proxies()
	if err != nil {
		t.Fatalf("toxiproxy %s: %v", st.Toxiproxy, err)
	}
	for _, name := range []string{"redis", "postgres"} {
		if p, ok := proxies[name]; !ok || p.Listen != st.Proxies[name] {
			t.Errorf("toxiproxy proxy %s = %+v; want one listening on %s", name, p, st.Proxies[name])
		}
	}
	for _, u := range st.API {
		resp, err := http.Get(u + "/items/42")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "miss" {
			t.Errorf("GET %s/items/42 = %s, X-Cache %q; want 200 miss or hit", u, resp.Status, resp.Header.Get("X-Cache"))
		}
		if err := rdb.Del(ctx, "item:42").Err(); err != nil {
			t.Fatal(err)
		}
	}

	// a second supervisor on the same state dir is refused and changes nothing
	if _, err := Start(ctx, Config{StateDir: dir, Binary: binary}); !errors.Is(err, ErrRunning) {
		t.Errorf("second Start = %v; want ErrRunning", err)
	}
	if got, err := ReadStatus(dir); err != nil || got.PIDs["redis"] != st.PIDs["redis"] {
		t.Errorf("ReadStatus after a refused Start = %v, %v; want the running testbed", got.PIDs, err)
	}

	tb.Stop()
	ports := statusPorts(t, append(append([]string{st.Redis, st.Toxiproxy, "tcp://" + st.Proxies["redis"], "tcp://" + st.Proxies["postgres"]}, st.API...), strings.Replace(st.Postgres, "postgres://", "tcp://", 1))...)
	assertGone(t, dir, ports)
	if _, err := ReadStatus(dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("ReadStatus after Stop = %v; want ErrNotRunning", err)
	}
}

func TestStartTearsDownWhenAPartFails(t *testing.T) {
	requireBinaries(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port

	for _, tc := range []struct {
		part  string
		ports Ports
	}{
		{"redis", Ports{Redis: port}},
		{"api-2", Ports{API: []int{0, port}}}, // the last part: everything else runs by then
	} {
		t.Run(tc.part, func(t *testing.T) {
			dir := stateDir(t)
			tb, err := Start(context.Background(), Config{StateDir: dir, Binary: binary, Replicas: 2, Items: 10, Ports: tc.ports, ReadyTimeout: 20 * time.Second})
			if err == nil {
				tb.Stop()
				t.Fatal("Start with a taken port succeeded")
			}
			var pe *PartError
			if !errors.As(err, &pe) || pe.Part != tc.part {
				t.Fatalf("Start error = %v; want a PartError naming %s", err, tc.part)
			}
			if pe.Log == "" || !strings.Contains(err.Error(), pe.Log) {
				t.Errorf("error %q does not name the log of %s", err, tc.part)
			}
			if _, statErr := os.Stat(pe.Log); statErr != nil {
				t.Errorf("the named log %s: %v", pe.Log, statErr)
			}
			if !strings.Contains(strings.ToLower(err.Error()), "address already in use") {
				t.Errorf("error %q does not say the address is in use", err)
			}
			assertGone(t, dir, nil)
		})
	}
}

func TestDownCleansUpAfterADeadSupervisor(t *testing.T) {
	requireBinaries(t)
	dir := stateDir(t)
	// a process standing in for a child the dead supervisor left running
	orphan := startSleeper(t, dir)
	st := state{Ready: true, Supervisor: proc{Name: "supervisor", PID: 1 << 22}, // no such pid
		Processes: []proc{{Name: "redis", PID: orphan.Process.Pid, Start: procStart(orphan.Process.Pid)}}}
	b, _ := json.Marshal(st)
	if err := os.WriteFile(statePath(dir), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var gone *SupervisorGoneError
	if _, err := ReadStatus(dir); !errors.Is(err, ErrNotRunning) || !errors.As(err, &gone) || gone.PID != 1<<22 || !strings.Contains(err.Error(), "testbed down") {
		t.Errorf("ReadStatus with a dead supervisor = %v; want ErrNotRunning, a SupervisorGoneError naming pid %d, telling to run testbed down", err, 1<<22)
	}
	if err := Down(dir, time.Second); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := orphan.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the orphan ended with %v; want killed", err)
	}
	assertGone(t, dir, nil)
	if err := Down(dir, time.Second); !errors.Is(err, ErrNotRunning) {
		t.Errorf("second Down = %v; want ErrNotRunning", err)
	}
}

// startSleeper starts a long sleep working in dir, in its own process group
// as the testbed's children are.
func startSleeper(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

func TestRestartReplacesPartsAndStopLeavesNothing(t *testing.T) {
	requireBinaries(t)
	dir := stateDir(t)
	ctx := context.Background()
	tb, err := Start(ctx, Config{StateDir: dir, Binary: binary, Replicas: 2, Items: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Stop)
	before := tb.Status().PIDs
	// what an experiment set on the replicas survives their restart
	for i, u := range tb.Status().API {
		for _, req := range []struct{ path, method, body string }{
			{"/admin/config", http.MethodPut, `{"strategy":"lock"}`},
			{"/admin/reset", http.MethodPost, fmt.Sprintf(`{"seed":%d}`, 77+i)},
		} {
			r, _ := http.NewRequest(req.method, u+req.path, strings.NewReader(req.body))
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}

	for _, tc := range []struct {
		part    string
		rolling bool
		want    []string
	}{
		{"postgres", false, []string{"postgres"}},
		{"redis", false, []string{"redis"}},
		{"api", true, []string{"api-1", "api-2"}},
	} {
		got, err := tb.Restart(ctx, tc.part, tc.rolling)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("Restart(%s) = %v, %v; want %v", tc.part, got, err, tc.want)
		}
	}
	if _, err := tb.Restart(ctx, "kafka", false); err == nil || !strings.Contains(err.Error(), "accepted: api, redis, postgres") {
		t.Errorf("Restart(kafka) = %v; want an error listing the parts", err)
	}
	// one replica by its name: the other keeps serving, the state file
	// follows the new process
	one, err := ReadStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tb.Restart(ctx, "api-2", false); err != nil || !slices.Equal(got, []string{"api-2"}) {
		t.Fatalf("Restart(api-2) = %v, %v; want api-2 alone", got, err)
	}
	if after, err := ReadStatus(dir); err != nil || after.PIDs["api-1"] != one.PIDs["api-1"] || after.PIDs["api-2"] == one.PIDs["api-2"] ||
		!alive(after.PIDs["api-2"], 0) || alive(one.PIDs["api-2"], 0) {
		t.Errorf("after Restart(api-2): pids %v (before %v), %v; want api-2's alone new and alive, its old one gone", after.PIDs, one.PIDs, err)
	}
	if _, err := tb.Restart(ctx, "api-3", false); err == nil {
		t.Error("Restart(api-3) of two replicas = nil; want it refused")
	}
	// a list of replicas, restarted together; one the testbed does not
	// run refuses the whole list
	if got, err := tb.Restart(ctx, "api-1,api-2", false); err != nil || !slices.Equal(got, []string{"api-1", "api-2"}) {
		t.Errorf("Restart(api-1,api-2) = %v, %v; want both", got, err)
	}
	if _, err := tb.Restart(ctx, "api-1,api-3", false); err == nil {
		t.Error("Restart(api-1,api-3) of two replicas = nil; want it refused")
	}

	st, err := ReadStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, old := range before {
		if name == "supervisor" || name == "toxiproxy" {
			continue
		}
		if st.PIDs[name] == old || alive(old, 0) {
			t.Errorf("%s: pid %d before, %d after the restart (old alive: %v); want a new process and the old one gone", name, old, st.PIDs[name], alive(old, 0))
		}
	}
	// everything serves again: the items are still in Postgres, Redis is empty
	for _, u := range st.API {
		resp, err := http.Get(u + "/items/7")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s/items/7 after the restarts = %s; want 200", u, resp.Status)
		}
	}
	for i, u := range st.API {
		var cfg struct{ Strategy string }
		var h struct{ Seed uint64 }
		for path, v := range map[string]any{"/admin/config": &cfg, "/healthz": &h} {
			resp, err := http.Get(u + path)
			if err != nil {
				t.Fatal(err)
			}
			_ = json.NewDecoder(resp.Body).Decode(v)
			resp.Body.Close()
		}
		if cfg.Strategy != "lock" || h.Seed != uint64(77+i) {
			t.Errorf("%s after its restart: strategy %q, seed %d; want lock and %d, as set before", u, cfg.Strategy, h.Seed, 77+i)
		}
	}
	// the control API restarts too
	resp, err := http.Post(st.Control+"/restart", "application/json", strings.NewReader(`{"part":"redis"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("POST %s/restart = %s; want 200", st.Control, resp.Status)
	}

	tb.Stop()
	assertGone(t, dir, nil)
}
