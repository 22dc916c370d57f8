//go:build !linux

package load

import "time"

// waker sleeps with the runtime's timers where there is no timerfd.
type waker struct{ stop chan struct{} }

func newWaker() (*waker, error) { return &waker{stop: make(chan struct{})}, nil }

func (w *waker) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.stop:
		return false
	case <-t.C:
		return true
	}
}

func (w *waker) interrupt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}

func (*waker) Close() error { return nil }
