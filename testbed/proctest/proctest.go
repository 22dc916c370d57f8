// Package proctest runs servers as processes of a test's own, for the
// packages that start real servers in tests (cachetest: nginx and
// Varnish; storetest: Memcached and MariaDB): each in a process group
// killed and reaped when the test ends, on a free loopback port, in a
// directory a server that drops to another user can enter.
package proctest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// WorkDir is a directory any user can enter (a server that drops to
// nobody or mysql when run as root), named after name, removed at the
// end unless the test failed: its logs are there.
func WorkDir(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "herdbench-"+name+"-")
	if err == nil {
		err = os.Chmod(dir, 0o777)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		}
	})
	return dir
}

// FreeAddr is a loopback host:port nothing listens on now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start runs argv in a process group of its own, its output in dir's
// output.log; the group is killed and reaped when t ends. The channel
// closes when the process exits.
func Start(t testing.TB, dir string, argv ...string) <-chan struct{} {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = out, out, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", argv[0], err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return done
}
