package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// Everything the stampede's flags can say, a scenario file can say.
func TestEveryStampedeFlagHasAScenarioKey(t *testing.T) {
	tags := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct {
			return
		}
		for i := range rt.NumField() {
			f := rt.Field(i)
			if tag := f.Tag.Get("flag"); tag != "" {
				tags[tag] = true
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(scenario.File{}))
	// the triggers' options are the trigger section's other keys: each
	// must come out of a file as its flag
	for _, o := range triggers.Default().Options() {
		f, err := scenario.Parse([]byte(fmt.Sprintf("trigger: {%s: %s}", o.Key, o)), "t.yaml", scenario.Vocabulary{Knobs: subject.Knobs(nil)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Settings() {
			if s.Path == "trigger."+o.Key && s.Values[0] == o.String() {
				tags[s.Flag] = true
			}
		}
	}
	// so are the replicas' knobs in the knobs section
	for _, k := range replica.Knobs() {
		c := replica.DefaultConfig
		v := k.Value(&c).String()
		f, err := scenario.Parse(fmt.Appendf(nil, "knobs: {%s: %q}", k.Name, v), "k.yaml", scenario.Vocabulary{Knobs: subject.Knobs(nil)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Settings() {
			if s.Path == "knobs."+k.Name && s.Values[0] == v {
				tags[s.Flag] = true
			}
		}
	}
	opts := newStampedeOptions(os.Stderr, triggers.Default)
	fs := pflag.NewFlagSet("stampede", pflag.ContinueOnError)
	bindStampedeFlags(fs, &opts)
	// arms have their own section; --json is -o json=FILE; a file must not
	// say yes or dry run for whoever runs it, nor where the load is sent
	// from (workers are the runner's machines, not the experiment's)
	special := []string{"arms", "json", "yes", "dry-run", "workers", "worker-count", "worker-token-file"}
	fs.VisitAll(func(f *pflag.Flag) {
		if !tags[f.Name] && !slices.Contains(special, f.Name) {
			t.Errorf("--%s has no scenario key", f.Name)
		}
		delete(tags, f.Name)
	})
	// an arm's edge policy (arms[].edge) starts from the edges' own, which
	// testbed up sets with the flags of the same names
	upCmd, _, err := testbedcmd.New(io.Discard, io.Discard).Find([]string{"up"})
	if err != nil {
		t.Fatal(err)
	}
	up := upCmd.Flags()
	for tag := range tags {
		if strings.HasPrefix(tag, "edge-") && up.Lookup(tag) != nil {
			continue
		}
		t.Errorf("scenario key tagged flag:%q names no stampede flag (nor, for an arm's edge policy, a testbed up flag)", tag)
	}
}

// An invalid scenario reports all of its problems in one message, each at
// its file:line, and exits 2 before anything runs. (A value that does not
// decode, such as keys: many, is reported alone: the bad-input table.)
func TestRunReportsEveryProblemOfAScenario(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	bad := `load:
  rate: 0
  keys: 100
  bogus: 1
  timeout: 2x
  clients: 0
trigger: {name: outage, outage: 5s}
knobs: {ttl_jitter: 3}
arms:
  - none
  - name: quick
    strategy: lock
    knobs: {lock_ttl: soon}
  - lokc
  - name: edgy
    strategy: none
    edge: {retry: immediate:2}
timeline: {after: 2s}
gates: ["lock:db.queries < 1", "db.querys < 2", "layers.end_to_end < 2"]
outputs: [pdf]
`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := herdbench(t, "run", path, "--state-dir", t.TempDir())
	if code != exitUsage || stdout != "" {
		t.Fatalf("run bad.yaml = exit %d, stdout %q; want exit 2 and nothing run", code, stdout)
	}
	for _, want := range []string{
		path + ":2: load.rate: 0 out of range (accepted: 1 to 20000 requests/s)",
		path + `:4: load.bogus: unknown key "bogus" (accepted: client_breaker,`,
		path + `:5: load.timeout: "2x" is not a duration such as 500ms`,
		path + ":6: load.clients: 0 out of range (accepted: 1 to 100000)",
		path + ":7: trigger.outage: 5s is not shorter than after, 2s",
		path + ":8: knobs.ttl_jitter: 3 out of range (accepted: 0 to 1",
		path + `:13: arms[1].knobs.lock_ttl: "soon" is not a duration`,
		path + `:14: arms[2] (lokc): strategy: unknown "lokc" (accepted: none, singleflight,`,
		path + ":15: arms[3] (edgy): sets the edge replicas' policy, and the local testbed the run would start in",
		path + `:19: gates[0]: "lock:db.queries < 1": unknown arm "lock" (accepted: none, quick, lokc, edgy)`,
		path + `:19: gates[1]: "db.querys < 2": unknown path "db.querys" (nearest: db.queries, `,
		path + `:19: gates[2]: "layers.end_to_end < 2": layers.end_to_end is a figure of the edge tier`,
		path + `:20: outputs[0]: pdf: unknown format "pdf" (accepted:`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("run bad.yaml stderr lacks\n  %s\nin\n%s", want, stderr)
		}
	}
	if strings.Count(stderr, path+":") != 13 {
		t.Errorf("run bad.yaml reported %d problems; want 13 in one message:\n%s", strings.Count(stderr, path+":"), stderr)
	}
}

// --arms picks a scenario file's arms by name, as it picks a target file's:
// in the flag's order, each as the file writes it, beside anything --arms
// reads itself; a name that is neither is refused, naming the file's arms.
func TestArmsPicksAScenarioFilesArms(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	file := `load: {rate: 100}
arms:
  - none
  - name: careful
    strategy: lock
    retry: immediate:1
  - name: eager
    strategy: xfetch
    edge: {breaker: "5:1s"}
`
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir() // no testbed runs there: the dry run describes the one it would start, with edges
	code, stdout, stderr := herdbench(t, "run", path, "--dry-run", "--state-dir", empty, "--tiers", "2", "--arms", "eager,careful,singleflight")
	var arms []string
	for _, l := range strings.Split(stdout, "\n") {
		if a, ok := strings.CutPrefix(l, "arm       "); ok {
			arms = append(arms, a)
		}
	}
	want := []string{
		`eager: the replicas' strategy xfetch; the edges' policy with {"breaker":"5:1s"}`,
		"careful: the replicas' strategy lock; its clients' own policy",
		"singleflight: the replicas' strategy singleflight",
	}
	if code != exitOK || !slices.Equal(arms, want) {
		t.Errorf("run s.yaml --dry-run --arms eager,careful,singleflight = exit %d, arms\n%s\nwant exit 0, arms\n%s\nstderr: %s",
			code, strings.Join(arms, "\n"), strings.Join(want, "\n"), stderr)
	}
	code, stdout, stderr = herdbench(t, "run", path, "--dry-run", "--state-dir", empty, "--arms", "careful,bogus,retry=x")
	for _, w := range []string{
		"--arms: bogus: not an arm of " + path + " (accepted: its arms none, careful, eager; a strategy, such as lock",
		`--arms: retry=x: retry policy "x": unknown kind "x" (accepted: none, immediate:N`,
	} {
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, w) {
			t.Errorf("run s.yaml --arms careful,bogus,retry=x = exit %d, stdout %q, stderr\n%s\nwant exit 2, nothing run, and %q", code, stdout, stderr, w)
		}
	}
}
