package load

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waker wakes a goroutine at an instant through a timerfd registered with
// the Go runtime's poller: the kernel's timer ends on time (tens of
// microseconds here) where the runtime's own timers wait for the poller's
// next millisecond, and the goroutine waits parked, holding no thread.
type waker struct {
	file *os.File
	raw  syscall.RawConn
	step func(fd uintptr) bool // w.wait, made once: a closure per sleep would be an allocation

	spec        unix.ItimerSpec // the sleep under way
	set, failed bool
}

func newWaker() (*waker, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	file := os.NewFile(uintptr(fd), "herdbench-pacer")
	raw, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	w := &waker{file: file, raw: raw}
	w.step = w.wait
	return w, nil
}

// sleep waits d, in one system call: it sets the timer, and returns when
// the poller says it fired. A read before that (as os.File.Read does) would
// only fail, and one after it only tells what the poller already said:
// every system call counts on a virtual machine where each costs
// microseconds. The timer is set after the poller forgets any earlier
// readiness (RawConn.Read resets it before its first call), so a timer that
// fires at once is not missed; an expiration nobody read leaves the timer
// readable, which the poller, edge-triggered, reports only at the next
// expiration. A wake before d, if ever, is the caller's to see: the sleeper
// looks at the clock and sleeps again. It returns false, at once, once
// interrupted.
func (w *waker) sleep(d time.Duration) bool {
	w.spec = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	w.set, w.failed = false, false
	if err := w.raw.Read(w.step); err != nil {
		return false
	}
	if w.failed {
		time.Sleep(d)
	}
	return true
}

// interrupt ends the sleep under way, and makes every later one return at
// once: the timer's read deadline is in the past.
func (w *waker) interrupt() { _ = w.file.SetReadDeadline(time.Unix(1, 0)) }

// wait is one call of RawConn.Read's loop: the first sets the timer and
// waits for the poller, the next, once the poller said it fired, ends it.
func (w *waker) wait(fd uintptr) bool {
	if w.set {
		return true
	}
	w.set = true
	if err := unix.TimerfdSettime(int(fd), 0, &w.spec, nil); err != nil {
		w.failed = true
		return true
	}
	return false
}

func (w *waker) Close() error { return w.file.Close() }
