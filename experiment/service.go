package experiment

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// serviceSubject is a service herdbench does not control: an arm is
// selected by its hooks, headers and query values; the cache is warmed
// with one request per hot key; nothing is flushed, reset or counted.
type serviceSubject struct {
	tg    *targets.Target
	limit time.Duration // the drain's; 0: DrainLimit
}

var _ Subject = (*serviceSubject)(nil)

func (s *serviceSubject) Keep(context.Context) func() { return func() {} }

// Select runs the arm's before hooks; after runs its after hooks.
func (s *serviceSubject) Apply(ctx context.Context, arm Arm) (Applied, error) {
	sel := arm.Select
	if sel == nil {
		return Applied{Arm: arm, After: func(context.Context) error { return nil }}, nil
	}
	if err := hooks(ctx, arm.Name, "before", sel.Before); err != nil {
		return Applied{}, err
	}
	return Applied{Arm: arm, After: func(ctx context.Context) error { return hooks(ctx, arm.Name, "after", sel.After) }}, nil
}

// hooks runs an arm's commands in order with sh -c, in herdbench's
// environment with HERDBENCH_ARM (the arm's name) and HERDBENCH_HOOK
// (before or after), so one command can switch every arm; the first that
// fails ends the arm, with its output.
func hooks(ctx context.Context, arm, when string, cmds []string) error {
	for _, c := range cmds {
		hctx, cancel := context.WithTimeout(ctx, hookTimeout)
		cmd := exec.CommandContext(hctx, "sh", "-c", c)
		cmd.Env = append(os.Environ(), "HERDBENCH_ARM="+arm, "HERDBENCH_HOOK="+when)
		// in a group of its own, killed whole at the timeout: a child of
		// sh's (a sleep, a curl) does not outlive it holding the output
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("%s hook %q: %v: %s", when, c, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// Fill warms the cache the only way it can: one request for each hot key,
// with the arm's headers and query values, a few at a time.
func (s *serviceSubject) Fill(ctx context.Context, _ Plan, arm Applied, _ triggers.Trigger, hot []string) (Warm, error) {
	build := armRequester(s.tg, arm.Arm)
	client := load.NewClient(10*time.Second, nil)
	endpoints := endpointsOf(s.tg, arm.Arm)
	err := each(ctx, len(hot), 8, func(ctx context.Context, _, i int) error {
		base := endpoints[i%len(endpoints)]
		req, err := build(ctx, base, hot[i])
		if err == nil {
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					err = fmt.Errorf("status %s", resp.Status)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("warm key %s on %s: %w (the hot keys are the first keys.hot of the target's key space: are they keys the service serves?)", hot[i], base, err)
		}
		return nil
	})
	return Warm{Keys: len(hot)}, err
}

// Counters: a service's own counters are not herdbench's to read (its
// Prometheus series are, when its target file names them).
func (s *serviceSubject) Counters(context.Context) (*APICounters, error) { return nil, nil }

// DrainLimit bounds a service's drain: past it, the arm is measured with
// the work still running, and says so.
const DrainLimit = 15 * time.Second

// drainTick is how often a service's drain reads its database.
const drainTick = 100 * time.Millisecond

// Drain waits, up to DrainLimit, until the database the target declares
// is quiet: none of its role's statements runs (Sample.Active) and the
// statements that count as DB queries stopped completing (their count
// unchanged over a tick). Without a declared database herdbench cannot
// see what the service still runs, and Drain returns at once. Past the
// limit it returns an error wrapping ErrStillRunning.
func (s *serviceSubject) Drain(ctx context.Context) error {
	tg := s.tg
	if tg.DB == nil && tg.MySQL == nil {
		return nil
	}
	src := observe.Source{DB: tg.DB, MySQL: tg.MySQL, Statements: tg.Statements, Role: tg.Role}
	prev, err := src.Read(ctx)
	if err != nil {
		return err
	}
	limit := cmp.Or(s.limit, DrainLimit)
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(drainTick):
		}
		cur, err := src.Read(ctx)
		if err != nil {
			return err
		}
		if cur.Active == 0 && cur.Calls == prev.Calls {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drain: after %s the service still ran %d statements of its role, %d DB queries completing in the last %s: %w",
				limit, cur.Active, cur.Calls-prev.Calls, drainTick, ErrStillRunning)
		}
		prev = cur
	}
}

func (s *serviceSubject) FillPlan(_ Plan, hot []string) string {
	return fmt.Sprintf("one request for each hot key (%d), with the arm's selection", len(hot))
}

func (s *serviceSubject) FillRequests(_ Plan, hot []string) int64 { return int64(len(hot)) }

// armRequester builds the target's request for a key with the arm's
// headers and query values.
func armRequester(tg *targets.Target, arm Arm) triggers.Requester {
	return func(ctx context.Context, base, key string) (*http.Request, error) {
		req, err := tg.NewRequest(ctx, base, key)
		if err != nil || arm.Select == nil {
			return req, err
		}
		for k, v := range arm.Select.Headers {
			req.Header.Set(k, v)
		}
		if len(arm.Select.Query) > 0 {
			q := req.URL.Query()
			for k, v := range arm.Select.Query {
				q.Set(k, v)
			}
			req.URL.RawQuery = q.Encode()
		}
		return req, nil
	}
}

// endpointsOf are where an arm's load goes: its own endpoints, when its
// target file gives it some, else the target's.
func endpointsOf(tg *targets.Target, a Arm) []string {
	if s := a.Select; s != nil && len(s.Endpoints) > 0 {
		return s.Endpoints
	}
	return tg.Endpoints
}
