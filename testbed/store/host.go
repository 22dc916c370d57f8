package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Local is how the local provider runs a store: as a process of its own
// on a loopback port, its data in the state directory.
type Local interface {
	// Find locates its programs, or says which package provides them
	// (a *MissingBinaryError).
	Find() (Programs, error)
	// Start starts it on port through h with the programs Find found,
	// creates and seeds what the replicas need in it, and returns its
	// status address and version once it answers.
	Start(ctx context.Context, h Host, bins Programs, port int) (addr, version string, err error)
}

// Programs are a store's programs by name ("initdb", "postgres").
type Programs map[string]string

// Host is what the local provider lends a store to start it.
type Host interface {
	// DataDir makes the directory name of the state directory anew,
	// empty, with perm, and gives it to cred's user (who must be able to
	// reach it) when cred is not nil.
	DataDir(name string, perm os.FileMode, cred *syscall.Credential) (string, error)
	// Run runs argv to its end in dir as cred's user (a one-time set-up:
	// initdb); on failure its output goes to a log named after the
	// program, which the error names with the output's last line.
	Run(ctx context.Context, dir string, cred *syscall.Credential, argv ...string) error
	// Spawn starts p under the testbed's supervision and returns once
	// p.Ready answers (a restart asks it again), with p's log.
	Spawn(ctx context.Context, p Process) (log string, err error)
	// Items is how many items to seed.
	Items() int
}

// Process is a long-running program of a store.
type Process struct {
	Name  string              // the store's name: its process, log and part
	Stop  syscall.Signal      // its graceful stop
	Cred  *syscall.Credential // whom it runs as; nil: as herdbench
	Argv  []string
	Ready func(ctx context.Context) error // nil once it serves
}

// MissingBinaryError says which program is missing and which package
// provides it.
type MissingBinaryError struct {
	Program  string
	Searched string
	Debian   string // apt-get package
	Homebrew string // brew formula
}

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("%s not found (searched %s): install it with `apt-get install %s` on Debian/Ubuntu or `brew install %s` with Homebrew",
		e.Program, e.Searched, e.Debian, e.Homebrew)
}

// onPath finds program on PATH, or says which package provides it.
func onPath(program, debian, homebrew string) (Programs, error) {
	p, err := exec.LookPath(program)
	if err != nil {
		return nil, &MissingBinaryError{Program: program, Searched: "PATH", Debian: debian, Homebrew: homebrew}
	}
	return Programs{program: p}, nil
}
