// Package localtest helps tests run the local testbed on real servers, as
// net/http/httptest helps them run HTTP servers: Main builds the herdbench
// binary the replicas run, Require skips a test on a machine without
// redis-server and PostgreSQL but fails it when CI is set (a skipped test
// proves nothing), StateDir makes a state directory postgres can enter
// when it runs as another user, and Measures and Exclusive share the
// machine among the tests that measure (or make) load.
package localtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herdbench/herdbench/internal/machinelock"
	"github.com/herdbench/herdbench/internal/testbinary"
	"github.com/herdbench/herdbench/testbed/local"
)

var binary string

// The state directories of the tests running now: on Ctrl-C, Main brings
// down whatever testbed each holds.
var (
	liveMu sync.Mutex
	live   = map[string]bool{}
)

// Main builds herdbench (testbinary.Build: once for the checkout) and runs
// the tests. Use it as
// func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }.
//
// An interrupt (Ctrl-C, SIGTERM) ends the tests without their cleanups, and
// a testbed `herdbench testbed up` started outlives its command by design:
// Main brings down every testbed in a state directory of StateDir's still
// in use, then exits 1, so an interrupted suite leaves no server behind.
func Main(m *testing.M) int {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-stop
		downAll()
		os.Exit(1)
	}()
	var err error
	if binary, err = testbinary.Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Binary is the herdbench executable Main built.
func Binary() string {
	if binary == "" {
		panic("localtest: Binary called without localtest.Main in TestMain")
	}
	return binary
}

// Require skips t when the testbed's binaries are missing, and fails it
// when the environment variable CI is set.
func Require(t testing.TB) {
	t.Helper()
	RequireFor(t, local.Config{})
}

// RequireFor is Require for a testbed of cfg: its database (Postgres or
// MariaDB) and its cache's programs.
func RequireFor(t testing.TB, cfg local.Config) {
	t.Helper()
	if err := local.CheckBinariesFor(cfg.Replica); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and the testbed cannot run: %v", err)
		}
		t.Skipf("testbed binaries missing: %v", err)
	}
}

// RequireObservability is Require for tests that also run Prometheus and
// its exporters (testbed up --observability): it skips t on a machine
// without them and fails it when CI is set.
func RequireObservability(t testing.TB) {
	t.Helper()
	Require(t)
	if err := local.CheckObservabilityBinaries(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and observability cannot run: %v", err)
		}
		t.Skipf("observability binaries missing: %v", err)
	}
}

// StateDir returns a new state directory, removed when t ends. It is under
// the temporary directory and world-searchable (t.TempDir's parent is not),
// because postgres runs as another user when the tests run as root.
func StateDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "herdbench-test-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	liveMu.Lock()
	live[dir] = true
	liveMu.Unlock()
	t.Cleanup(func() {
		liveMu.Lock()
		delete(live, dir)
		liveMu.Unlock()
		os.RemoveAll(dir)
	})
	return dir
}

// downAll runs `herdbench testbed down` in every state directory in use,
// each within a minute (the docker provider's down takes seconds).
func downAll() {
	liveMu.Lock()
	defer liveMu.Unlock()
	for dir := range live {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = exec.CommandContext(ctx, binary, "testbed", "down", "--state-dir", dir).Run()
		cancel()
		os.RemoveAll(dir)
	}
}

// Measures holds the machine for t, which makes or measures load, until t
// ends: beside other such tests (go test runs packages side by side),
// never beside an Exclusive one. A test that measures asserts what holds
// on a busy machine. Tests that only start and stop things need not take it.
func Measures(t testing.TB) {
	t.Helper()
	machinelock.Share(t)
}

// Exclusive holds the machine for t alone until t ends: no other test that
// measures or makes load runs meanwhile, whatever its package. For tests
// whose servers and load fill the machine (the docker end-to-end tests).
func Exclusive(t testing.TB) {
	t.Helper()
	machinelock.Take(t)
}

// Start requires the binaries, starts a testbed with cfg in a new state
// directory, takes the machine (Measures) once it is up, and stops it
// when t ends. The start itself is not measured: it may run beside
// another test's measurement, as a busy machine would.
func Start(t testing.TB, cfg local.Config) *local.Testbed {
	t.Helper()
	RequireFor(t, cfg)
	cfg.StateDir = StateDir(t)
	cfg.Binary = Binary()
	tb, err := local.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Stop)
	Measures(t) // released before Stop: cleanups run last first
	return tb
}

// Run runs the herdbench binary Main built with args, in env (nil: this
// process' environment), and returns its exit code and output. It fails
// t only when the binary cannot run at all: exit codes are the caller's to
// check.
func Run(t testing.TB, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(Binary(), args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run herdbench %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}
