//go:build !linux

package triggers

import "syscall"

// bindNoPort does nothing where IP_BIND_ADDRESS_NO_PORT is unknown.
func bindNoPort(_, _ string, _ syscall.RawConn) error { return nil }
