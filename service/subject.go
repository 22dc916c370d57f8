package service

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Subject is a service herdbench does not control as the experiment's
// subject: an arm is selected by its hooks, headers and query values; the
// cache is warmed with one request per hot key; nothing is flushed, reset
// or counted.
type Subject struct {
	Target *targets.Target
	Limit  time.Duration // the drain's; 0: DrainLimit
	// idleLB is HAProxy's backend's sessions before the arm's fill, the
	// level its drain waits for them to fall to; -1: not read
	idleLB int64
	// idleSeries are the values of the series the drain waits on
	// (prometheus.drain) before the arm's fill, by name
	idleSeries map[string]float64
	// backend is the arm's load balancer backend (arms[].backend; "": the
	// file's haproxy.backend), the one its drain waits on
	backend string
}

var _ plan.Subject = (*Subject)(nil)

func (s *Subject) Keep(context.Context) func() { return func() {} }

// Apply reads the levels the arm's drain waits to fall back to (HAProxy's
// sessions, the series of prometheus.drain), then runs the arm's before
// hooks; after runs its after hooks.
func (s *Subject) Apply(ctx context.Context, arm arm.Arm, at plan.ArmAt) (plan.Applied, error) {
	s.backend = ""
	if arm.Select != nil {
		s.backend = arm.Select.Backend
	}
	s.idleLB = s.lbLevel(ctx)
	series, err := s.Target.Instant(ctx)
	if err != nil {
		return plan.Applied{}, fmt.Errorf("the drain's level before the arm: %w", err)
	}
	s.idleSeries = series
	sel := arm.Select
	if sel == nil {
		return plan.Applied{Arm: arm, After: func(context.Context) error { return nil }}, nil
	}
	if err := hooks(ctx, arm.Name, at, "before", sel.Before); err != nil {
		return plan.Applied{}, err
	}
	return plan.Applied{Arm: arm, After: func(ctx context.Context) error { return hooks(ctx, arm.Name, at, "after", sel.After) }}, nil
}

// hooks runs an arm's commands in order with sh -c, in herdbench's
// environment with HERDBENCH_ARM (the arm's name), HERDBENCH_ARM_INDEX
// (its place in the plan's arms, from 0), HERDBENCH_RESULTS_DIR (the
// run's results directory, made before the first hook, so a hook can save
// what it saw beside the results; empty when the run writes none) and
// HERDBENCH_HOOK (before or after), so one command can switch every arm;
// the first that fails ends the arm, with its output.
func hooks(ctx context.Context, arm string, at plan.ArmAt, when string, cmds []string) error {
	if at.ResultsDir != "" && len(cmds) > 0 {
		if err := os.MkdirAll(at.ResultsDir, 0o755); err != nil {
			return fmt.Errorf("%s hooks: results directory: %w", when, err)
		}
	}
	for _, c := range cmds {
		hctx, cancel := context.WithTimeout(ctx, experiment.HookTimeout)
		cmd := exec.CommandContext(hctx, "sh", "-c", c)
		cmd.Env = append(os.Environ(), "HERDBENCH_ARM="+arm, "HERDBENCH_HOOK="+when,
			"HERDBENCH_ARM_INDEX="+strconv.Itoa(at.Index), "HERDBENCH_RESULTS_DIR="+at.ResultsDir)
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
func (s *Subject) Fill(ctx context.Context, _ plan.Plan, arm plan.Applied, _ triggers.Trigger, hot []string) (result.Warm, error) {
	build := plan.RequesterFor(s.Target, arm.Arm)
	client := load.NewClient(10*time.Second, nil)
	endpoints := plan.EndpointsFor(s.Target, arm.Arm)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8) // a few at a time
	for i := range hot {
		if gctx.Err() != nil { // the first error skips the rest
			break
		}
		g.Go(func() error { return warm(gctx, build, client, endpoints[i%len(endpoints)], hot[i]) })
	}
	err := g.Wait()
	return result.Warm{Keys: len(hot)}, cmp.Or(err, ctx.Err())
}

// warm sends the request for one hot key to base.
func warm(ctx context.Context, build triggers.Requester, client *http.Client, base, key string) error {
	req, err := build(ctx, base, key)
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
		return fmt.Errorf("warm key %s on %s: %w (the hot keys are the first keys.hot of the target's key space: are they keys the service serves?)", key, base, err)
	}
	return nil
}

// Counters: a service's own counters are not herdbench's to read (its
// Prometheus series are, when its target file names them).
func (s *Subject) Counters(context.Context) (result.Counters, error) { return nil, nil }

func (s *Subject) FillPlan(_ plan.Plan, hot []string) string {
	return fmt.Sprintf("one request for each hot key (%d), with the arm's selection", len(hot))
}

func (s *Subject) FillRequests(_ plan.Plan, hot []string) int64 { return int64(len(hot)) }
