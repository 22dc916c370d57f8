// Package machinelock gives a test the machine to itself. go test runs
// packages in parallel; a test that measures load, or makes enough of it to
// disturb another's measurement, takes this lock first, and so runs alone
// among the tests that take it, whatever package they are in.
package machinelock

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Take blocks until no other test on the machine holds the lock, then holds
// it until t ends.
func Take(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "herdbench-tests.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // closing the file releases the lock
}
