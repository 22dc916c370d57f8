package testbed

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// fake is a provider whose state is a file named after it in the state
// directory, holding nothing: enough to find, start and stop it.
type fake struct {
	name      string
	unusable  error    // Available's answer
	refuses   []string // options it cannot honour
	items     int
	ups       *int // Up calls
	stops     *int // stop calls
	restarter Restarter
}

func newFake(name string) fake { return fake{name: name, items: 100, ups: new(int), stops: new(int)} }

func (f fake) Name() string                             { return f.name }
func (f fake) Available(context.Context, Options) error { return f.unusable }
func (f fake) Items(o Options) int {
	if o.Items != 0 && !slices.Contains(f.refuses, "items") {
		return o.Items
	}
	return f.items
}

func (f fake) Problems(o Options) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, s := range o.Set {
		if slices.Contains(f.refuses, s) {
			bad.Add(s, "not with %s", f.name)
		}
	}
	return bad
}

func (f fake) Up(_ context.Context, o Options) (Status, func(context.Context) error, error) {
	*f.ups++
	if err := os.WriteFile(filepath.Join(o.StateDir, f.name), nil, 0o644); err != nil {
		return Status{}, nil, err
	}
	st, _ := f.Status(context.Background(), o.StateDir)
	st.Items = f.Items(o)
	if o.Detach {
		return st, nil, nil
	}
	return st, func(context.Context) error {
		*f.stops++
		_, err := f.Down(context.Background(), o.StateDir, time.Second)
		return err
	}, nil
}

func (f fake) Recorded(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, f.name))
	return err == nil
}

func (f fake) Status(_ context.Context, dir string) (Status, error) {
	if !f.Recorded(dir) {
		return Status{}, ErrNotRunning
	}
	return Status{Provider: f.name, StateDir: dir, API: []string{"http://a", "http://b"}, Items: f.items}, nil
}

func (f fake) Down(_ context.Context, dir string, _ time.Duration) (string, error) {
	if err := os.Remove(filepath.Join(dir, f.name)); err != nil {
		return "", ErrNotRunning
	}
	return f.name + " removed", nil
}

func (f fake) Restarter(Status) Restarter { return f.restarter }

func TestRegistryNamesAndLookup(t *testing.T) {
	r := NewRegistry(newFake("one"), newFake("two"))
	if got := r.Names(); !slices.Equal(got, []string{"auto", "one", "two"}) {
		t.Errorf("Names() = %v; want [auto one two]", got)
	}
	if p, err := r.Get("two"); err != nil || p.Name() != "two" {
		t.Errorf("Get(two) = %v, %v; want the provider two", p, err)
	}
	for _, name := range []string{"k8s", "auto"} {
		if _, err := r.Get(name); len(herd.Fields(err)) != 1 || herd.Fields(err)[0].Field != "provider" {
			t.Errorf("Get(%s) error = %v; want a FieldError on provider", name, err)
		}
	}
	if err := r.Check("k8s"); err == nil || !strings.Contains(err.Error(), `provider: unknown "k8s" (accepted: auto, one, two)`) {
		t.Errorf("Check(k8s) = %v; want provider: unknown, naming the accepted values", err)
	}
	for _, dup := range [][]Provider{{newFake("one"), newFake("one")}, {newFake("auto")}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewRegistry(%s, ...) did not panic", dup[0].Name())
				}
			}()
			NewRegistry(dup...)
		}()
	}
}

func TestChoose(t *testing.T) {
	missing := errors.New("redis-server not found")
	noDocker := errors.New("docker compose not found")
	tests := []struct {
		name              string
		requested         string
		localErr, dockErr error
		want, wantLog     string
		wantErr           []string
	}{
		{"explicit local", "local", missing, nil, "local", "", nil},
		{"explicit docker", "docker", nil, noDocker, "docker", "", nil},
		{"auto, local installed", "auto", nil, nil, "local", "provider: local (it can run here; --provider docker instead)", nil},
		{"auto, local missing", "auto", missing, nil, "docker", "provider: docker (the local provider cannot run: redis-server not found)", nil},
		{"auto, neither", "auto", missing, noDocker, "", "", []string{"no provider can run", "local: redis-server not found", "docker: docker compose not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, dock := newFake("local"), newFake("docker")
			loc.unusable, dock.unusable = tt.localErr, tt.dockErr
			var log bytes.Buffer
			p, err := NewRegistry(loc, dock).Choose(context.Background(), Options{Provider: tt.requested, Log: &log})
			var got string
			if p != nil {
				got = p.Name()
			}
			if got != tt.want || strings.TrimSpace(log.String()) != tt.wantLog {
				t.Errorf("Choose(%s) = %q, log %q; want %q, log %q", tt.requested, got, log.String(), tt.want, tt.wantLog)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Choose(%s) error = %v; want it to contain %q", tt.requested, err, w)
				}
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("Choose(%s) error = %v", tt.requested, err)
			}
		})
	}
}

// Ensure starts what is asked when nothing runs, owns it unless detached,
// and uses what runs, saying what it lacks; Find, Status, Down and
// Restarter follow the provider the state directory records.
func TestEnsureStartsOrUsesTheRunningTestbed(t *testing.T) {
	loc, dock := newFake("local"), newFake("docker")
	dock.restarter = fakeRestarter("docker's")
	r := NewRegistry(loc, dock)
	dir := t.TempDir()
	ctx := context.Background()

	run, err := r.Ensure(ctx, Options{StateDir: dir, Provider: "docker", Replicas: 2})
	if err != nil || !run.Started || !run.Owned() || run.Status.Provider != "docker" || *dock.ups != 1 || *loc.ups != 0 {
		t.Fatalf("Ensure(docker) = %+v, %v; want docker started, owned", run, err)
	}
	if rs := run.Restarter(); rs != fakeRestarter("docker's") {
		t.Errorf("Restarter() = %v; want docker's", rs)
	}
	// a second caller uses it, whatever it asks
	mc := replica.DefaultOptions
	mc.Cache = replica.CacheMemcached
	again, err := r.Ensure(ctx, Options{StateDir: dir, Replicas: 3, Tiers: TwoTiers, Replica: mc, Set: []string{"replicas", "tiers", "db_pool", "cache"}})
	want := []Mismatch{{Option: "replicas", Asked: "3", Has: "2"}, {Option: "tiers", Asked: "2", Has: "1"}, {Option: "db_pool"}, {Option: "cache", Asked: "memcached", Has: "redis"}}
	if err != nil || again.Started || again.Owned() || again.Provider.Name() != "docker" || !slices.Equal(again.Ignored, want) {
		t.Errorf("Ensure on a running testbed = %+v, %v; want it used, not owned, ignoring %v", again, err, want)
	}
	if err := again.Stop(ctx); err != nil || !dock.Recorded(dir) {
		t.Errorf("Stop of a testbed Ensure did not start = %v, recorded %v; want it left running", err, dock.Recorded(dir))
	}
	if st, err := r.Status(ctx, Auto, dir); err != nil || st.Provider != "docker" {
		t.Errorf("Status(auto) = %+v, %v; want docker's", st, err)
	}
	if _, err := r.Status(ctx, "local", dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Status(local) = %v; want ErrNotRunning", err)
	}
	if err := run.Stop(ctx); err != nil || dock.Recorded(dir) || *dock.stops != 1 {
		t.Errorf("Stop of the testbed Ensure started = %v, recorded %v, stops %d; want it stopped once", err, dock.Recorded(dir), *dock.stops)
	}
	if err := run.Stop(ctx); err != nil || *dock.stops != 1 {
		t.Errorf("second Stop = %v, stops %d; want nothing more", err, *dock.stops)
	}

	// detached: started, not owned; Down(auto) finds it
	run, err = r.Ensure(ctx, Options{StateDir: dir, Detach: true})
	if err != nil || !run.Started || run.Owned() || run.Provider.Name() != "local" {
		t.Fatalf("Ensure(detach) = %+v, %v; want local started, not owned", run, err)
	}
	if done, err := r.Down(ctx, Auto, dir, time.Second); err != nil || done != "local removed" {
		t.Errorf("Down(auto) = %q, %v; want local's", done, err)
	}
	if _, err := r.Down(ctx, Auto, dir, time.Second); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Down(auto) with nothing recorded = %v; want ErrNotRunning", err)
	}
}

// Every problem of the options is told at once, before anything starts;
// so is a key space beyond the items, running or to be started.
func TestEnsureRefusesBeforeStarting(t *testing.T) {
	loc, dock := newFake("local"), newFake("docker")
	dock.refuses = []string{"items", "db_pool"}
	r := NewRegistry(loc, dock)
	dir := t.TempDir()
	ctx := context.Background()
	tests := []struct {
		name string
		o    Options
		want []string // each a problem's text, in order
	}{
		{"options", Options{StateDir: dir, Replicas: 0, Tiers: 3, Set: []string{"replicas", "tiers", "edge_retry"}},
			[]string{"replicas: 0 out of range (accepted: 1 to 64)", "tiers: 3 out of range", "edge_retry: sets the edge tier's policy, and there is none with --tiers 1"}},
		{"provider's", Options{StateDir: dir, Provider: "docker", Items: 5, Set: []string{"items", "db_pool"}},
			[]string{"items: not with docker", "db_pool: not with docker"}},
		{"keys, local would start", Options{StateDir: dir, Items: 50, Keys: 80},
			[]string{"keys: 80 is more than the 50 items the local testbed would be seeded with", "(accepted: 1 to 50; or --items 80)"}},
		{"keys, docker seeds a fixed count", Options{StateDir: dir, Provider: "docker", Keys: 101},
			[]string{"keys: 101 is more than the 100 items the docker testbed would be seeded with", "the docker provider seeds a fixed count: ask for fewer keys"}},
		{"unknown provider", Options{StateDir: dir, Provider: "k8s"}, []string{`provider: unknown "k8s"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Ensure(ctx, tt.o)
			fe := herd.Fields(err)
			if len(fe) != len(tt.want) && !strings.HasPrefix(tt.name, "keys") {
				t.Errorf("Ensure = %v; want %d problems", err, len(tt.want))
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Ensure = %v; want it to say %q", err, w)
				}
			}
			if *loc.ups+*dock.ups != 0 {
				t.Fatalf("Ensure started a testbed (%d, %d) it refused", *loc.ups, *dock.ups)
			}
		})
	}

	// a running testbed's items: recorded, and checked
	if _, err := r.Ensure(ctx, Options{StateDir: dir, Provider: "local", Items: 100}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Ensure(ctx, Options{StateDir: dir, Keys: 101})
	if fe := herd.Fields(err); len(fe) != 1 || fe[0].Field != "keys" ||
		!strings.Contains(err.Error(), "101 is more than the 100 items the testbed running in "+dir+" was seeded with") ||
		!strings.Contains(err.Error(), "'herdbench testbed down', then 'herdbench testbed up --items 101'") {
		t.Errorf("Ensure(keys 101) on 100 items = %v; want keys refused, saying how to fix it", err)
	}
	if run, err := r.Ensure(ctx, Options{StateDir: dir, Keys: 100}); err != nil || run.Started {
		t.Errorf("Ensure(keys 100) on 100 items = %+v, %v; want the running testbed", run, err)
	}
	if run, err := r.Preview(ctx, Options{StateDir: t.TempDir(), Provider: "docker"}); err != nil || !run.Started || run.Status.Items != 100 || *dock.ups != 0 {
		t.Errorf("Preview(docker) = %+v, %v; want what would start, not started", run, err)
	}
}

// A state file from before items were recorded reads as items unknown:
// no check.
func TestUnknownItemsAreNotChecked(t *testing.T) {
	loc := newFake("local")
	loc.items = 0
	r := NewRegistry(loc)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := r.Ensure(context.Background(), Options{StateDir: dir, Keys: 1_000_000, Items: 5, Set: []string{"items"}})
	if err != nil || run.Started || len(run.Ignored) != 0 {
		t.Errorf("Ensure on a testbed of unknown items = %+v, %v; want it used, unchecked, nothing said of items", run, err)
	}
}

type fakeRestarter string

func (fakeRestarter) Restart(context.Context, string, bool) ([]string, error) { return nil, nil }
