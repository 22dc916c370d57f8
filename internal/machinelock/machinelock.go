// Package machinelock shares the machine among the tests that measure
// load, whatever package they are in: go test runs packages side by side
// (-p: the number of CPUs by default, four in the README's command), and
// a test's figures include what the others take of the cores.
//
// Three locks, each held until the test ends:
//
//   - Share: the test makes or measures load, and asserts what holds on a
//     busy machine (an inequality between arms, a bound with a reason, a
//     tie to a source). It runs beside other sharers, up to Seats of them
//     at once, never beside an exclusive test.
//   - Take: the test runs alone among the tests that take a lock: the
//     docker end-to-end tests, whose containers and load fill the machine.
//     A waiting Take holds back new sharers, so it is not starved.
//   - TakeEngine: the test brings up the docker testbed; every compose
//     project of docker-compose.yml publishes the same host ports. Take it
//     before Take or Share, never after, so no two tests wait on each other.
//
// Setting a testbed up is not measuring: tests start their servers, then
// take Share or Take for what they measure, so one test's start-up runs
// beside another's measurement, as a busy machine would.
//
// A test's elapsed time in go test's output includes its waits; every lock
// logs how long its test waited and held it, so `go test -json` shows what
// each test took and the suite's serial part (bench/testtimes reads them).
package machinelock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	mainFile      = "herdbench-tests.lock"
	turnstileFile = "herdbench-tests-turnstile.lock"
	engineFile    = "herdbench-tests-engine.lock"
)

// dir holds the lock files: the machine's temporary directory, shared by
// every test process (a test of this package uses its own).
var dir = os.TempDir()

// Share blocks while an exclusive test holds the machine or waits for it,
// then holds the machine beside other sharers until t ends.
//
// A test that shares the machine already, itself or through a test it is
// a subtest of, keeps that share and does not pass the turnstile again:
// waiting there behind a waiting Take, it would wait for itself, as the
// Take waits for the share it holds (seen in CI: three packages stuck to
// their 10-minute timeout behind a test that took Share twice).
func Share(t testing.TB) {
	t.Helper()
	if sharing(t.Name()) {
		t.Logf("sharelock: waited 0.0s (held by %s already)", t.Name())
		return
	}
	machine(t, syscall.LOCK_SH, "sharelock")
	seat(t)
	name := t.Name()
	sharers.Lock()
	sharers.names[name]++
	sharers.Unlock()
	t.Cleanup(func() {
		sharers.Lock()
		defer sharers.Unlock()
		if sharers.names[name]--; sharers.names[name] == 0 {
			delete(sharers.names, name)
		}
	})
}

// sharers are the tests of this process that share the machine, by name.
var sharers = struct {
	sync.Mutex
	names map[string]int
}{names: map[string]int{}}

// sharing reports whether the test named name, or one it is a subtest of,
// shares the machine now.
func sharing(name string) bool {
	sharers.Lock()
	defer sharers.Unlock()
	for held := range sharers.names {
		if name == held || strings.HasPrefix(name, held+"/") {
			return true
		}
	}
	return false
}

// Take blocks until no other test holds the machine, shared or not, then
// holds it alone until t ends.
func Take(t testing.TB) {
	t.Helper()
	machine(t, syscall.LOCK_EX, "machinelock")
}

// machine locks the machine as how says, through the turnstile: a Take
// waits for the machine holding it, so no new sharer passes meanwhile.
func machine(t testing.TB, how int, name string) {
	t.Helper()
	began := time.Now()
	turn := lock(t, turnstileFile, syscall.LOCK_EX)
	f := lock(t, mainFile, how)
	turn.Close()
	hold(t, name, f, began)
}

// Seats is how many tests share the machine at once, whatever their
// package (HERDBENCH_TEST_SEATS, 2 by default): at -p 4 on two cores,
// four packages' load tests at once saturated them (93% busy), and claims
// that hold on a busy machine failed on a saturated one, a different few
// each run; three at once still held the cores 85% busy, and three of four
// fresh-clone runs of 2026-12-03 failed such a claim. The cores being the
// bound, fewer at once costs little time.
var Seats = seatCount()

func seatCount() int {
	if n, err := strconv.Atoi(os.Getenv("HERDBENCH_TEST_SEATS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// seat blocks until one of the Seats is free, then holds it until t ends.
func seat(t testing.TB) {
	t.Helper()
	began := time.Now()
	for {
		for i := range Seats {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("herdbench-tests-seat-%d.lock", i)), os.O_CREATE|os.O_RDWR, 0o666)
			if err != nil {
				t.Fatal(err)
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				hold(t, "seat", f, began)
				return
			}
			f.Close()
		}
		time.Sleep(20 * time.Millisecond) // a seat frees when its test ends
	}
}

// TakeEngine blocks until no other test holds the Docker Engine, then
// holds it until t ends. Take it before Take or Share.
func TakeEngine(t testing.TB) {
	t.Helper()
	began := time.Now()
	hold(t, "enginelock", lock(t, engineFile, syscall.LOCK_EX), began)
}

// lock opens file in the temporary directory and locks it as how says.
func lock(t testing.TB, file string, how int) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return f
}

// hold keeps f's lock until t ends, logging the wait and the hold.
func hold(t testing.TB, name string, f *os.File, began time.Time) {
	t.Helper()
	held := time.Now()
	t.Logf("%s: waited %.1fs", name, held.Sub(began).Seconds())
	t.Cleanup(func() {
		f.Close() // closing the file releases the lock
		t.Logf("%s: held %.1fs", name, time.Since(held).Seconds())
	})
}
