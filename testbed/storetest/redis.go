package storetest

import (
	"net"
	"testing"

	"github.com/herdbench/herdbench/testbed/proctest"
)

// Redis starts redis-server on a free loopback port, without persistence,
// and returns its host:port once it answers PING.
func Redis(t testing.TB) string {
	t.Helper()
	bin := require(t, "redis-server", "redis-server")
	dir := proctest.WorkDir(t, "redis")
	addr := proctest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	done := proctest.Start(t, dir, bin, "--bind", "127.0.0.1", "--port", port, "--dir", dir,
		"--save", "", "--appendonly", "no", "--logfile", "redis.log")
	poll(t, "redis on "+addr, dir, done, func() error { return answers(addr, "PING", "+PONG") })
	return addr
}
