package triggers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/figure"
)

// OutputLimit is how much of a command's output is kept: its last bytes,
// stdout and stderr together, as they were written.
const OutputLimit = 4 << 10

// Outcome is how one shell command went.
type Outcome struct {
	// ExitCode is the command's exit status; -1 when it was killed (timed
	// out, or the run was interrupted) or never started
	ExitCode  int    `json:"exit_code"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Output    string `json:"output"`              // its last OutputLimit bytes of stdout and stderr
	Truncated bool   `json:"truncated,omitempty"` // the output was longer: its beginning is cut
	TookMS    int64  `json:"took_ms"`
}

// outcome are the figures of a command's outcome.
var outcome = figure.Decl[Outcome]{
	figure.LevelOf("exit_code", func(o *Outcome) *int { return &o.ExitCode }),
	figure.MillisOf("took_ms", func(o *Outcome) *int64 { return &o.TookMS }),
}

// shell runs script with sh -c, with environ added to this process's
// environment, in a process group of its own: when timeout passes or ctx
// ends, the whole group is killed (a pipeline's every process, not only
// sh). It returns when the command exited, with the tail of its output,
// and an error when it did not exit 0.
func shell(ctx context.Context, script string, timeout time.Duration, environ []string) (Outcome, time.Time, time.Time, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", script)
	cmd.Env = append(os.Environ(), environ...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second // a grandchild that escaped the group and holds the output
	out := &tail{limit: OutputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	started := time.Now()
	err := cmd.Run()
	exited := time.Now()
	o := Outcome{ExitCode: -1, TookMS: exited.Sub(started).Milliseconds()}
	o.Output, o.Truncated = out.text()
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		o.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		o.TimedOut = true
		err = errors.New("timed out after " + timeout.String() + ", killed")
	case ctx.Err() != nil:
		err = errors.Join(ctx.Err(), errors.New("killed"))
	}
	return o, started, exited, err
}

// tail keeps the last limit bytes written to it.
type tail struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// text is what was kept, whether the start was cut, as valid UTF-8: a
// character cut in two at the start is dropped.
func (t *tail) text() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), ""), t.cut
}
