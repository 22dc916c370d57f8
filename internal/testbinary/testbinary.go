// Package testbinary builds the herdbench executable the tests run, once
// for every test process of a checkout. go test runs each package's tests
// in a process of its own, and ten packages run the binary (the replicas,
// the commands): each linking its own copy cost about 3 s of CPU (12 s on a
// cold machine) beside other packages' load tests.
//
// Build links into one path per module directory, under a lock, and go
// build links there again only when the sources changed: it leaves a
// binary whose build ID matches in place, so a test process running it
// meanwhile is not disturbed. The binary stays in the temporary directory
// for the next process, as go's own build cache does.
package testbinary

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Build returns the path of herdbench built from this checkout's sources.
func Build() (string, error) {
	mod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	sum := sha256.Sum256(bytes.TrimSpace(mod))
	dir := filepath.Join(os.TempDir(), "herdbench-test-bin-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing it releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "herdbench")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/herdbench/herdbench/cmd/herdbench").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build herdbench: %w\n%s", err, out)
	}
	return bin, nil
}
