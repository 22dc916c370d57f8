//go:build !linux

package load

import "time"

// waker sleeps with the runtime's timers where there is no timerfd.
type waker struct{}

func newWaker() (*waker, error) { return &waker{}, nil }

func (*waker) sleep(d time.Duration) { time.Sleep(d) }

func (*waker) Close() error { return nil }
