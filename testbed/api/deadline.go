package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
)

// errExpired ends a request whose propagated deadline passed.
var errExpired = errors.New("the caller's deadline passed")

// deadlineKey marks a request's context with its propagated deadline.
type deadlineKey struct{}

// withDeadline reads admin.DeadlineHeader's value h into ctx as an absolute
// deadline counted from now. An empty h leaves ctx as it is; a value that
// is not a whole number of milliseconds from 0 to 1 hour is an error.
func withDeadline(ctx context.Context, h string, now time.Time) (context.Context, error) {
	if h == "" {
		return ctx, nil
	}
	ms, err := strconv.ParseInt(h, 10, 64)
	if err != nil || ms < 0 || ms > int64(time.Hour/time.Millisecond) {
		return ctx, fmt.Errorf("%s: %q: want the milliseconds the caller has left, a whole number from 0 to 3600000", admin.DeadlineHeader, h)
	}
	return context.WithValue(ctx, deadlineKey{}, now.Add(time.Duration(ms)*time.Millisecond)), nil
}

// propagated is ctx's propagated deadline, if it has one.
func propagated(ctx context.Context) (time.Time, bool) {
	d, ok := ctx.Value(deadlineKey{}).(time.Time)
	return d, ok
}

// bounded is base bounded by ctx's propagated deadline, and whether that
// deadline has already passed. Loads run on a context detached from the
// request (a shared load outlives the request that started it), so the
// deadline is applied to it here.
func bounded(base, ctx context.Context) (context.Context, context.CancelFunc, bool) {
	d, ok := propagated(ctx)
	if !ok {
		return base, func() {}, false
	}
	c, cancel := context.WithDeadline(base, d)
	return c, cancel, !time.Now().Before(d)
}
