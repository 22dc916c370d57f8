package storetest

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

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
	poll(t, "redis on "+addr, dir, done, func() error { return redisPing(addr) })
	return addr
}

// redisPing sends PING on a connection of its own.
func redisPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("answered %q", line)
	}
	return nil
}
