package main

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The fuzzers' seeds run in every `go test`, and `go test -fuzz` runs one
// fuzzer at a time, for as long as it is told: CI runs the README's
// `go test -p 4 -timeout 20m ./...`, which explores nothing. These tests run the fuzzers'
// checks (checkCommandLine, checkScenarioFile, checkTargetFile) over
// inputs drawn from a seeded random source, for a bounded time each:
// exploreCI under CI, exploreLocal elsewhere. The seed is logged, and
// HERDBENCH_EXPLORE_SEED replays it. They run side by side, after the
// package's other tests: each a core's work for its time, none a figure.
const (
	exploreCI    = 10 * time.Second
	exploreLocal = 2 * time.Second
)

// values are what a user may give a flag or a file's key: right, wrong,
// empty, out of range, not finite, of another flag.
var values = []string{
	"", " ", "0", "1", "-1", "2", "3", "10", "100", "1000", "1.5", "0.5", "1e999", "NaN", "Inf", "-Inf", "abc",
	"5s", "-1s", "0s", "500ms", "2m", "1h", "auto", "auto:1h", "auto:30s", "none", "none,lock", "none,none",
	"lock+ttl_jitter", "xfetch", "retry=immediate:2", "immediate:2", "exp:100ms:1s:3", "10%", "150%", "50ms:10%",
	"5:2s", "on", "off", "60%,30%", "burst=10..100", "burst=10..10", "rate=100..1000", "rate=100,1000",
	"db.queries < 0", "db.queries <= 120", "http.drop_rate < 1%", "http.drop_rate < 1.5", "lock:db.queries < 120",
	"verdict == metastable", "127.0.0.1:0", ":99999", "abc:1", "http://x", "http://127.0.0.1:1/items/{key}",
	"testbed", "expire", "burst", "outage", "slowdb", "command", "restart", "flush", "notify", "true",
	"docker", "local", "redis", "memcached", "postgres", "mariadb", "table", "json", "html=r.html", "Bad_Name", "x",
}

// exploreSeed is HERDBENCH_EXPLORE_SEED, or else one from the clock,
// logged so that a failure can be replayed.
func exploreSeed(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HERDBENCH_EXPLORE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("HERDBENCH_EXPLORE_SEED=%q: not a whole number", s)
		}
		seed = n
	}
	t.Logf("seed %d (replay: HERDBENCH_EXPLORE_SEED=%d go test ./cmd/herdbench -run '%s')", seed, seed, t.Name())
	return rand.New(rand.NewPCG(seed, seed))
}

// explore calls try with a fresh directory until the time is up or a
// check failed, and says how many inputs it tried.
func explore(t *testing.T, try func(r *rand.Rand, dir string) string) {
	budget := exploreLocal
	if os.Getenv("CI") != "" {
		budget = exploreCI
	}
	r := exploreSeed(t)
	n := 0
	for end := time.Now().Add(budget); time.Now().Before(end); n++ {
		dir, err := os.MkdirTemp(t.TempDir(), "")
		if err != nil {
			t.Fatal(err)
		}
		input := try(r, dir)
		if t.Failed() {
			t.Fatalf("after %d inputs, on:\n%s", n, input)
		}
		_ = os.RemoveAll(dir)
	}
	t.Logf("%d inputs", n)
}

// TestFuzzCommandLineExplores runs checkCommandLine on command lines of
// the fuzzer's commands with random flags and values.
func TestFuzzCommandLineExplores(t *testing.T) {
	t.Parallel() // in-process and measuring nothing: the three explore side by side
	root := newRootCmd(io.Discard, io.Discard)
	var cmds [][]string
	flags := map[string][]string{}
	for _, path := range [][]string{{"stampede"}, {"sweep"}, {"kube"}, {"worker"}, {"report"}, {"testbed", "up"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, path)
		flags[strings.Join(path, " ")] = flagNames(c)
	}
	explore(t, func(r *rand.Rand, dir string) string {
		args := slices.Clone(cmds[r.IntN(len(cmds))])
		args = append(args, randomFlags(r, flags[strings.Join(args, " ")])...)
		switch args[0] {
		case "kube": // the controller's command line, after --
			args = append(args, "--image", "x", "--configmap", "c", "--", "stampede")
			args = append(args, randomFlags(r, flags["stampede"])...)
		case "sweep":
			if r.IntN(2) == 0 {
				args = append(args, "--vary", values[r.IntN(len(values))])
			}
		}
		checkCommandLine(t, args, dir)
		return strings.Join(args, " ")
	})
}

// TestFuzzScenarioFileExplores runs checkScenarioFile on the example
// scenarios, mutated.
func TestFuzzScenarioFileExplores(t *testing.T) {
	t.Parallel() // in-process and measuring nothing: the three explore side by side
	seeds := exampleFiles(t, false)
	explore(t, func(r *rand.Rand, dir string) string {
		content := mutate(r, seeds[r.IntN(len(seeds))])
		checkScenarioFile(t, content, dir)
		return content
	})
}

// TestFuzzTargetFileExplores runs checkTargetFile on the example target
// files, mutated.
func TestFuzzTargetFileExplores(t *testing.T) {
	t.Parallel() // in-process and measuring nothing: the three explore side by side
	seeds := exampleFiles(t, true)
	explore(t, func(r *rand.Rand, dir string) string {
		content := mutate(r, seeds[r.IntN(len(seeds))])
		checkTargetFile(t, content, dir)
		return content
	})
}

// flagNames are c's flags but help, sorted.
func flagNames(c *cobra.Command) []string {
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	slices.Sort(names)
	return names
}

// randomFlags are up to four of names, each with a random value.
func randomFlags(r *rand.Rand, names []string) []string {
	var args []string
	for range r.IntN(5) {
		args = append(args, "--"+names[r.IntN(len(names))], values[r.IntN(len(values))])
	}
	return args
}

// exampleFiles are the examples that are target files (with endpoints:),
// or else the scenarios.
func exampleFiles(t *testing.T, target bool) []string {
	paths, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nendpoints:") == target {
			out = append(out, string(b))
		}
	}
	if len(out) == 0 {
		t.Fatal("no example files")
	}
	return out
}

// mutate changes one to three lines of a YAML file: a value replaced by
// one of values, a line dropped, or a line given twice.
func mutate(r *rand.Rand, content string) string {
	lines := strings.Split(content, "\n")
	for range 1 + r.IntN(3) {
		i := r.IntN(len(lines))
		switch r.IntN(4) {
		case 0, 1:
			if k, _, ok := strings.Cut(lines[i], ": "); ok {
				lines[i] = k + ": " + values[r.IntN(len(values))]
			}
		case 2:
			lines = slices.Delete(lines, i, i+1)
		case 3:
			lines = slices.Insert(lines, i, lines[i])
		}
		if len(lines) == 0 {
			lines = []string{""}
		}
	}
	return strings.Join(lines, "\n")
}
