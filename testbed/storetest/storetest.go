// Package storetest starts real Redis, Memcached and MariaDB servers for
// tests, from Debian's redis-server, memcached and mariadb-server
// packages, as cachetest starts nginx and Varnish: each runs as a process
// group of the test's own, on a free loopback port, in a directory of its
// own, and is killed with its group when the test ends. Readiness is
// polled with a deadline, never slept for. A machine without the binaries
// skips the test, unless CI is set: then it fails, since a skipped test
// proves nothing.
//
// MariaDB runs with performance_schema on and its grant tables in force
// (never skip-grant-tables), so tests can create users, grant them what
// herdbench needs and KILL their connections as a real server would.
package storetest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/proctest"
)

// readyWithin bounds how long a server may take to answer.
const readyWithin = 60 * time.Second

// require finds a binary, or skips t (fails it with CI set) naming the
// Debian package that brings it.
func require(t testing.TB, pkg, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin/", "/usr/local/sbin/", "/usr/bin/"} {
		if _, err := os.Stat(dir + name); err == nil {
			return dir + name
		}
	}
	msg := fmt.Sprintf("%s missing (apt-get install %s)", name, pkg)
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %s", msg)
	}
	t.Skip(msg)
	return ""
}

// Memcached starts memcached on a free loopback port and returns its
// host:port once it answers `version`.
func Memcached(t testing.TB) string {
	t.Helper()
	bin := require(t, "memcached", "memcached")
	dir := proctest.WorkDir(t, "memcached")
	addr := proctest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	argv := []string{bin, "-l", "127.0.0.1", "-p", port, "-U", "0", "-m", "64", "-c", "1024", "-t", "2"}
	if os.Geteuid() == 0 {
		argv = append(argv, "-u", "nobody") // memcached refuses to run as root without -u
	}
	done := proctest.Start(t, dir, argv...)
	poll(t, "memcached on "+addr, dir, done, func() error { return answers(addr, "version", "VERSION ") })
	return addr
}

// answers sends line on a connection of its own and says whether the
// first line back starts with want: a server that speaks its protocol.
func answers(addr, line, want string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(line + "\r\n")); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(got, want) {
		return fmt.Errorf("answered %q", got)
	}
	return nil
}

// poll calls up until it succeeds, for at most readyWithin; a process
// that exited fails t at once, with the logs in dir.
func poll(t testing.TB, what, dir string, done <-chan struct{}, up func() error) {
	t.Helper()
	deadline := time.Now().Add(readyWithin)
	for {
		err := up()
		if err == nil {
			return
		}
		exited := false
		select {
		case <-done:
			exited = true
		default:
		}
		if exited || time.Now().After(deadline) {
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			var b strings.Builder
			for _, l := range logs {
				text, _ := os.ReadFile(l)
				fmt.Fprintf(&b, "--- %s\n%s\n", l, tail(string(text), 3000))
			}
			t.Fatalf("%s did not answer (exited: %v): %v\n%s", what, exited, err, b.String())
		}
		time.Sleep(50 * time.Millisecond) // polling, with the deadline above
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
