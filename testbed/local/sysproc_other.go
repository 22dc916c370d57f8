//go:build !linux

package local

import "syscall"

// childAttr puts a child in its own process group, so a terminal's Ctrl-C
// reaches only the supervisor, which stops the children in order. Outside
// Linux there is no parent-death signal: `testbed down` cleans up after a
// supervisor that was killed.
func childAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}
