package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// process is one child of the supervisor.
type process struct {
	name    string
	cmd     *exec.Cmd
	log     string
	stopSig syscall.Signal // graceful stop: SIGTERM, or SIGINT for postgres' fast shutdown
	argv    []string
	cred    *syscall.Credential
	// ready answers nil once the process serves; set after its first start,
	// used again by a restart
	ready func(context.Context) error
	// replica is set for API replicas: what a restart needs to start one
	// again with the config and seed it had
	replica *replicaSpec
	// stopped marks a stop herdbench asked for, which is not worth a warning
	stopped atomic.Bool
	done    chan struct{} // closed when the process has exited
	err     error         // exit error, set before done closes
}

// startProcess starts argv in its own process group with output appended to
// logPath. cred, when set, runs it as another user.
func startProcess(name, dir, logPath string, stopSig syscall.Signal, cred *syscall.Credential, argv ...string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer f.Close() // the child holds its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = childAttr(cred)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, stopSig: stopSig, argv: argv, cred: cred, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		if p.err == nil {
			return true, errors.New("exited")
		}
		return true, fmt.Errorf("exited: %w", p.err)
	default:
		return false, nil
	}
}

// stop asks the process group to stop, and kills it after grace; without
// grace it kills it at once.
func (p *process) stop(grace time.Duration) {
	p.stopped.Store(true)
	select {
	case <-p.done:
		return
	default:
	}
	sig := p.stopSig
	if grace <= 0 {
		sig = syscall.SIGKILL // no graceful stop at all: a crash
	}
	_ = syscall.Kill(-p.pid(), sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
	// children that outlived their leader (postgres backends) go too
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
}

// procStart is a process' start time in clock ticks since boot, from
// /proc/PID/stat, which tells a pid from a later process that reused it. It
// returns 0 where /proc is missing.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// the command name (field 2) may hold spaces; fields after it are plain
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 { // field 22 overall is the 20th after the name
		return 0
	}
	v, _ := strconv.ParseUint(fields[19], 10, 64)
	return v
}

// alive reports whether pid runs and is still the process that started at
// start (0 skips that check).
func alive(pid int, start uint64) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	if s := procStart(pid); start != 0 && s != 0 && s != start {
		return false
	}
	// a zombie is not running
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// tail returns the last n non-empty lines of a log file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// Processes returns the pids of processes whose working directory is inside
// dir. Every child of a local testbed runs there (postgres in its data dir
// below it), so after Stop or Down this must be empty. It reads /proc and
// returns nil where there is none.
func Processes(dir string) []int {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil {
			continue
		}
		if cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
