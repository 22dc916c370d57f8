package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/herdbench/herdbench/testbed"
)

// SuperviseArgs are the arguments of herdbench that run a detached
// supervisor: Supervise, reading its Config on stdin and writing Notify's
// message on file descriptor NotifyFD.
var SuperviseArgs = []string{"testbed", "supervise"}

// NotifyFD is the file descriptor a detached supervisor reports on.
const NotifyFD = 3

// StartDetached starts the testbed under a supervisor process of its own
// (cfg.Binary run with SuperviseArgs, in a session of its own, logging to
// the state directory's logs/supervisor.log) and returns once it reports
// every part ready, or its error. The testbed outlives the caller until
// Down. If ctx ends first, the supervisor is stopped, and with it
// everything it started.
func StartDetached(ctx context.Context, cfg Config) (testbed.Status, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return testbed.Status{}, err
	}
	dir := cfg.StateDir
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return testbed.Status{}, fmt.Errorf("state dir: %w", err)
	}
	cfg.LogFile = filepath.Join(dir, "logs", "supervisor.log")
	logf, err := os.Create(cfg.LogFile)
	if err != nil {
		return testbed.Status{}, err
	}
	defer logf.Close()
	b, err := json.Marshal(cfg)
	if err != nil {
		return testbed.Status{}, fmt.Errorf("supervisor config: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return testbed.Status{}, err
	}
	defer r.Close()
	sup := exec.Command(cfg.Binary, SuperviseArgs...)
	sup.Stdin = bytes.NewReader(b)
	sup.Stdout, sup.Stderr = logf, logf
	sup.ExtraFiles = []*os.File{w} // NotifyFD
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	sup.Dir = dir // like every process of the testbed: Processes finds it
	err = sup.Start()
	w.Close()
	if err != nil {
		return testbed.Status{}, fmt.Errorf("start testbed supervisor: %w", err)
	}
	return awaitSupervisor(ctx, sup, r, cfg.LogFile)
}

// awaitSupervisor waits for the supervisor's Notify on r, or for ctx.
func awaitSupervisor(ctx context.Context, sup *exec.Cmd, r io.Reader, logPath string) (testbed.Status, error) {
	type result struct {
		st  testbed.Status
		err error
	}
	ready := make(chan result, 1)
	go func() {
		st, err := AwaitReady(r)
		ready <- result{st, err}
	}()
	var res result
	select {
	case res = <-ready:
	case <-ctx.Done():
		_ = sup.Process.Signal(syscall.SIGTERM)
		<-ready
		_ = sup.Wait()
		return testbed.Status{}, fmt.Errorf("interrupted: the testbed was stopped before it was ready (log: %s)", logPath)
	}
	if res.err != nil {
		_ = sup.Wait() // it tears down what it started, then exits
		if errors.Is(res.err, ErrSupervisorDied) {
			return testbed.Status{}, fmt.Errorf("%w: %s (log: %s)", res.err, tail(logPath, 1), logPath)
		}
		return testbed.Status{}, res.err
	}
	// its stdin is copied by now: it has read its config to report ready
	_ = sup.Process.Release()
	return res.st, nil
}

// Supervise is a detached supervisor's life (StartDetached): it reads its
// Config as JSON from config, starts the testbed, tells notify how that
// went (Notify) and closes it, then keeps the testbed until ctx ends and
// stops it. It logs to log.
func Supervise(ctx context.Context, config io.Reader, notify io.WriteCloser, log io.Writer) error {
	var cfg Config
	dec := json.NewDecoder(config)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		err = fmt.Errorf("supervisor config: %w", err)
		_ = Notify(notify, testbed.Status{}, err)
		_ = notify.Close()
		return err
	}
	cfg.Log = slog.New(slog.NewTextHandler(log, nil))
	tb, err := Start(ctx, cfg)
	var st testbed.Status
	if tb != nil {
		st = tb.Status()
	}
	_ = Notify(notify, st, err)
	_ = notify.Close()
	if err != nil {
		return err
	}
	defer tb.Stop()
	<-ctx.Done()
	return nil
}
