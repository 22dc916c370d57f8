package local

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/herdbench/herdbench/testbed/api"
)

// startMemcached runs memcached on port, on loopback only, with nothing
// but its memory (64 MB, no UDP), and waits until it answers `version`.
// It returns the server's version. As root, memcached must be told whom
// to run as: root, as the rest of the testbed's own servers do.
func (tb *Testbed) startMemcached(ctx context.Context, port int) (string, error) {
	args := []string{tb.bins.memcached, "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "64"}
	if os.Getuid() == 0 {
		args = append(args, "-u", "root")
	}
	p, err := tb.spawn(ctx, memcachedPart, syscall.SIGTERM, nil, args...)
	if err != nil {
		return "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var version string
	p.ready = func(ctx context.Context) error {
		version, err = memcachedVersion(ctx, addr)
		return err
	}
	if err := tb.waitReady(ctx, p, p.ready); err != nil {
		return "", err
	}
	tb.status.Memcached = addr
	return version, nil
}

// memcachedPart is memcached's name among the testbed's processes, logs,
// versions and proxies: the cache's name (api.CacheMemcached).
const memcachedPart = api.CacheMemcached

// memcachedVersion asks the memcached at addr its version, bounded by ctx.
func memcachedVersion(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("version\r\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION ")
	if !ok {
		return "", fmt.Errorf("memcached answered version with %q", strings.TrimSpace(line))
	}
	return v, nil
}
