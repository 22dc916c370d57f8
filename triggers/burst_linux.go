package triggers

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// bindNoPort lets a socket bound to a source address choose its port at
// connect, unique towards its destination only (IP_BIND_ADDRESS_NO_PORT),
// so a burst's bound sockets take no port from anyone else's destinations.
func bindNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	})
	return errors.Join(err, serr)
}
