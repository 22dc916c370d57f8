package local

import "syscall"

// childAttr puts a child in its own process group, so a terminal's Ctrl-C
// reaches only the supervisor, which stops the children in order; SIGKILL on
// the supervisor's death makes sure none outlives it.
func childAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
}
