package local

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
)

// A detached supervisor reads its Config as JSON: every field but the
// logger must come through as it was.
func TestConfigCrossesToTheSupervisor(t *testing.T) {
	replica := replica.DefaultOptions
	replica.DBPoolSize, replica.Seed = 7, 99
	replica.Config.Strategy, replica.Config.QueryCost = "lock+ttl_jitter", herd.Duration(20*time.Millisecond)
	pol, err := retry.Parse("exp:10ms:100ms:3")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{StateDir: "/s", Binary: "/b", Replicas: 2, Items: 30, Replica: replica, ReadyTimeout: time.Minute,
		LogFile: "/s/logs/supervisor.log", Observability: true, Tiers: TwoTiers,
		Ports: Ports{Redis: 1, API: []int{2, 3}, Edge: []int{4, 5}},
		Edge:  edge.Options{Seed: 99, Config: edge.Config{Timeout: herd.Duration(time.Second), Retry: pol, Bulkhead: 3}}}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Config through JSON = %+v, %v;\nwant %+v", got, err, want)
	}
}

// A state file written before the items were recorded still loads: items
// unknown (0), which Ensure does not check.
func TestStateFileWithoutItemsLoads(t *testing.T) {
	dir := t.TempDir()
	old := `{"provider":"local","api":["http://127.0.0.1:1"],"state_dir":"` + dir + `","ready":true,"supervisor":{"name":"supervisor","pid":1,"start":1}}`
	if err := os.WriteFile(statePath(dir), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := readState(dir)
	if err != nil || st.Items != 0 || len(st.API) != 1 {
		t.Errorf("readState(a state file without items) = %+v, %v; want it read, items 0", st, err)
	}
}

// The local provider through Ensure, on real servers: detached, it
// outlives its caller's ownership and records its items; a second Ensure
// uses it, refuses keys beyond them and says what it lacks; Down stops
// everything.
func TestEnsureDetachedLocalTestbed(t *testing.T) {
	requireBinaries(t)
	dir := stateDir(t)
	reg := testbed.NewRegistry(Provider{})
	ctx := context.Background()
	t.Cleanup(func() { _ = Down(dir, 30*time.Second) })
	run, err := reg.Ensure(ctx, testbed.Options{StateDir: dir, Binary: binary, Replicas: 1, Items: 30, Detach: true, Keys: 30})
	if err != nil {
		t.Fatal(err)
	}
	if !run.Started || run.Owned() || run.Status.Items != 30 || run.Status.PIDs["supervisor"] == os.Getpid() || run.Status.Logs["supervisor"] == "" {
		t.Errorf("Ensure(detach) = %+v; want started under a supervisor of its own, not owned, 30 items, its log named", run)
	}
	if st, err := ReadStatus(dir); err != nil || st.Items != 30 {
		t.Errorf("ReadStatus = items %d, %v; want 30 recorded in the state file", st.Items, err)
	}
	_, err = reg.Ensure(ctx, testbed.Options{StateDir: dir, Keys: 31})
	if fe := herd.Fields(err); len(fe) != 1 || fe[0].Field != "keys" || !strings.Contains(err.Error(), "31 is more than the 30 items") {
		t.Errorf("Ensure(keys 31) = %v; want keys refused", err)
	}
	again, err := reg.Ensure(ctx, testbed.Options{StateDir: dir, Replicas: 2, Set: []string{"replicas"}, Keys: 30})
	if err != nil || again.Started || again.Status.PIDs["supervisor"] != run.Status.PIDs["supervisor"] ||
		!slices.Equal(again.Ignored, []testbed.Mismatch{{Option: "replicas", Asked: "2", Has: "1"}}) {
		t.Errorf("second Ensure = %+v, %v; want the running testbed, replicas 2 ignored", again, err)
	}
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStatus(dir); err != nil {
		t.Errorf("after Stop of a testbed Ensure did not start: %v; want it running", err)
	}
	ports := statusPorts(t, append(run.Status.API, run.Status.Redis, run.Status.Toxiproxy, run.Status.Control)...)
	if done, err := reg.Down(ctx, testbed.Auto, dir, 30*time.Second); err != nil || !strings.Contains(done, "logs kept") {
		t.Fatalf("Down = %q, %v", done, err)
	}
	assertGone(t, dir, ports)
}
