package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/store"
)

// ErrNotRunning is returned by ReadStatus and Down when the state directory
// has no running testbed: testbed.ErrNotRunning, which every provider's
// errors wrap.
var ErrNotRunning = testbed.ErrNotRunning

// SupervisorGoneError is the ErrNotRunning of a state directory that
// records a testbed whose supervisor is gone: Down (testbed down) cleans
// up what it left.
type SupervisorGoneError struct {
	Dir string
	PID int // the supervisor's
}

func (e *SupervisorGoneError) Error() string {
	return fmt.Sprintf("%v in %s: its supervisor (pid %d) is gone; `herdbench testbed down` cleans up what it left", ErrNotRunning, e.Dir, e.PID)
}

func (e *SupervisorGoneError) Unwrap() error { return ErrNotRunning }

// state is what the state file records: the status, and enough about every
// process to stop it from another process, even after the supervisor died.
type state struct {
	testbed.Status
	Ready      bool   `json:"ready"`
	Supervisor proc   `json:"supervisor"`
	Processes  []proc `json:"processes"`
}

type proc struct {
	Name  string `json:"name"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // /proc start time, tells a reused pid apart
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// writeState records the testbed atomically.
func (tb *Testbed) writeState(ready bool) error {
	tb.mu.Lock()
	st := state{Status: tb.status, Ready: ready,
		Supervisor: proc{Name: "supervisor", PID: os.Getpid(), Start: procStart(os.Getpid())}}
	for _, p := range tb.procs {
		st.Processes = append(st.Processes, proc{Name: p.name, PID: p.pid(), Start: procStart(p.pid())})
	}
	tb.mu.Unlock()
	return testbed.WriteStateFile(statePath(tb.cfg.StateDir), st)
}

func readState(dir string) (state, error) {
	var st state
	return st, testbed.ReadStateFile(statePath(dir), &st, ErrNotRunning)
}

// ReadStatus returns the status of the testbed running in dir. A testbed
// still starting, or one whose supervisor died, is an error saying so.
func ReadStatus(dir string) (testbed.Status, error) {
	st, err := readState(dir)
	if err != nil {
		return st.Status, err
	}
	if !alive(st.Supervisor.PID, st.Supervisor.Start) {
		return st.Status, &SupervisorGoneError{Dir: dir, PID: st.Supervisor.PID}
	}
	if !st.Ready {
		return st.Status, fmt.Errorf("the testbed in %s is still starting (supervisor pid %d)", dir, st.Supervisor.PID)
	}
	return st.Status, nil
}

// Down stops the testbed running in dir from another process: it asks the
// supervisor to tear down and waits for it, then kills anything a dead
// supervisor left behind and removes the data.
func Down(dir string, timeout time.Duration) error {
	st, err := readState(dir)
	if errors.Is(err, ErrNotRunning) && lockHeld(dir) {
		return fmt.Errorf("a testbed is starting in %s and has not recorded itself yet: run down again once up returns", dir)
	}
	if err != nil {
		return err
	}
	sup := st.Supervisor
	if sup.PID != os.Getpid() && alive(sup.PID, sup.Start) {
		_ = syscall.Kill(sup.PID, syscall.SIGTERM)
		deadline := time.Now().Add(timeout)
		t := time.NewTicker(20 * time.Millisecond)
		for alive(sup.PID, sup.Start) && time.Now().Before(deadline) {
			<-t.C
		}
		t.Stop()
		if alive(sup.PID, sup.Start) {
			_ = syscall.Kill(sup.PID, syscall.SIGKILL)
		}
	}
	// clean up holding the lock, so a new supervisor cannot start meanwhile
	lock, err := lockStateDir(dir)
	if err != nil {
		return err
	}
	defer unlockStateDir(lock)
	return cleanup(dir)
}

// cleanup kills what a dead supervisor recorded and removes the data.
func cleanup(dir string) error {
	st, err := readState(dir)
	if errors.Is(err, ErrNotRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, p := range st.Processes {
		if alive(p.PID, p.Start) {
			_ = syscall.Kill(-p.PID, syscall.SIGKILL)
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	removeData(dir)
	return nil
}

// removeData deletes what a testbed stores, keeping the logs.
func removeData(dir string) {
	names := []string{"prometheus", "state.json", "state.json.tmp"}
	for _, k := range store.Kinds() { // their data directories
		names = append(names, k.Name())
	}
	for _, name := range names {
		_ = os.RemoveAll(filepath.Join(dir, name))
	}
}

// lockStateDir takes the state directory's lock, held by the supervisor for
// the testbed's life, so two supervisors never share a directory. It tries
// for lockWait, since Down and lockHeld hold it for a moment.
func lockStateDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock state dir: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock state dir: %w", err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w in %s", ErrRunning, dir)
		}
		time.Sleep(20 * time.Millisecond) // polling a lock: no readiness to wait for
	}
}

const lockWait = time.Second

// lockHeld reports whether a supervisor holds dir's lock.
func lockHeld(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

func unlockStateDir(f *os.File) {
	if f != nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
}

// toxiproxyVersion is the embedded toxiproxy module's version.
func toxiproxyVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/Shopify/toxiproxy/v2" {
				return d.Version
			}
		}
	}
	return "unknown"
}
