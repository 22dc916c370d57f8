package triggers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
)

// Command runs the user's own command at T, with sh -c on this machine,
// for what herdbench cannot do itself: purge a CDN or an HTTP cache
// through its API, flip a feature flag, `kubectl rollout restart`. Its
// undo, Chaos Toolkit's rollback, runs once after the arm whenever the
// command started: also when it failed or the run was interrupted.
// herdbench does not sandbox either: they run as the user, with the
// user's environment and four variables of the run's (Environ).
type Command struct {
	Run         string        `json:"run" help:"the command run at T with sh -c (required with --trigger command)"`
	Undo        string        `json:"undo" help:"the command that undoes it, run once after the arm, also when the command or the arm failed or the run was interrupted (empty: none)"`
	Timeout     herd.Duration `json:"command_timeout" help:"how long the command may run before it is killed (shorter than after)"`
	UndoTimeout herd.Duration `json:"undo_timeout" help:"how long the undo may run before it is killed"`
	For         herd.Duration `json:"command_for" help:"the trigger's end, counted from T, instead of the command's exit (0: when it exits)"`
	// EndedWhen is a URL polled from the command's exit until it answers
	// 2xx, or lb:SERVER, the target's HAProxy read until it lists SERVER
	// UP: the trigger's end, as the service says it (a health check, the
	// load balancer putting a server back), instead of the exit or a guess
	EndedWhen string `json:"ended_when,omitempty" help:"the trigger's end, polled every 100 ms from the command's exit (at most 1m): a URL's first 2xx (its host loopback or allowed), or lb:SERVER, when the target file's haproxy: lists SERVER UP"`
}

// EndProber is a trigger whose end a URL says (its first 2xx): the run
// checks the URL's host as one it touches.
type EndProber interface {
	EndProbe() string // the URL; "" without one
}

// LBEndProber is a trigger whose end a load balancer's server says (its
// return to UP): the run checks that the target has a load balancer.
type LBEndProber interface {
	EndServer() (string, bool) // the server; false without one
}

// EndProbe is the command's end probe, ended_when, when it is a URL.
func (c *Command) EndProbe() string {
	if _, ok := c.EndServer(); ok {
		return ""
	}
	return c.EndedWhen
}

// EndServer is the server behind the target's load balancer whose return
// ends the trigger (ended_when: lb:SERVER).
func (c *Command) EndServer() (string, bool) { return strings.CutPrefix(c.EndedWhen, lbPrefix) }

// lbPrefix marks an end probe on the load balancer's stats: lb:SERVER.
const lbPrefix = "lb:"

// MaxEndProbe bounds how long an end probe is polled: past it, the
// trigger's end is unknown (null) and the detail says so.
const MaxEndProbe = time.Minute

// NewCommand is a command trigger with its defaults: the command killed
// after 5 s (shorter than the stampede's default after), its undo after
// 30 s, and its end when it exits.
func NewCommand() *Command {
	return &Command{Timeout: herd.Duration(5 * time.Second), UndoTimeout: herd.Duration(30 * time.Second)}
}

// Caps on the command's timeouts: an arm's load is at most 10m, and an
// undo has the limit of an arm's before and after hook commands.
const (
	MaxCommandTimeout = 5 * time.Minute
	MaxUndoTimeout    = time.Minute
)

// CommandDetail is what command did, its times counted from T.
type CommandDetail struct {
	StartedMS int64 `json:"started_ms"`
	ExitedMS  int64 `json:"exited_ms"`
	// EndedWhenMS is when the end probe first answered 2xx; null without
	// one, or when it never did within MaxEndProbe
	EndedWhenMS *int64 `json:"ended_when_ms,omitempty"`
	Outcome
	Undo *Outcome `json:"undo,omitempty"` // nil without an undo
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *CommandDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[CommandDetail]{
		figure.MillisOf("started_ms", func(d *CommandDetail) *int64 { return &d.StartedMS }),
		figure.MillisOf("exited_ms", func(d *CommandDetail) *int64 { return &d.ExitedMS }),
		figure.Opt("ended_when_ms", figure.Duration, "ms", func(d *CommandDetail) **int64 { return &d.EndedWhenMS }).OmitEmpty(),
		figure.Group("", func(d *CommandDetail) *Outcome { return &d.Outcome }, outcome),
		figure.Nullable("undo", func(d *CommandDetail) **Outcome { return &d.Undo }, outcome).OmitEmpty(),
	})
}

var (
	_ Trigger  = (*Command)(nil)
	_ Preparer = (*Command)(nil)
	_ Lasting  = (*Command)(nil)
	_ Chosen   = (*Command)(nil)
	_ Undoer   = (*armedCommand)(nil)
)

func (*Command) Name() string { return "command" }

// Detail is an empty CommandDetail, into which results are read.
func (*Command) Detail() any { return &CommandDetail{} }

func (c *Command) Describe() string {
	if c.Run == "" {
		return "your command (--run) with sh -c at T; its undo (--undo) after the arm"
	}
	d := fmt.Sprintf("%q with sh -c at T", c.Run)
	if c.Undo != "" {
		d += fmt.Sprintf("; %q after the arm", c.Undo)
	}
	return d
}

// Validate checks the timeouts and the end.
func (c *Command) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if c.Timeout <= 0 || time.Duration(c.Timeout) > MaxCommandTimeout {
		errs.Add("command_timeout", "%s out of range (accepted: more than 0, at most %s)", c.Timeout, herd.Duration(MaxCommandTimeout))
	}
	if c.UndoTimeout <= 0 || time.Duration(c.UndoTimeout) > MaxUndoTimeout {
		errs.Add("undo_timeout", "%s out of range (accepted: more than 0, at most %s, the limit of an arm's hook commands)", c.UndoTimeout, herd.Duration(MaxUndoTimeout))
	}
	if c.For < 0 || c.For > herd.Duration(time.Minute) {
		errs.Add("command_for", "%s out of range (accepted: 0, the command's exit, to 1m)", c.For)
	}
	if server, ok := c.EndServer(); ok && server == "" {
		errs.Add("ended_when", "lb: names no server (accepted: lb:SERVER, a server of the target file's haproxy.backend, such as lb:api-2)")
	} else if u, err := url.Parse(c.EndedWhen); !ok && c.EndedWhen != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		errs.Add("ended_when", "%q is not an http URL (accepted: a URL that answers 2xx once the trigger's cause is over, such as http://127.0.0.1:8080/healthz; or lb:SERVER)", c.EndedWhen)
	} else if !ok && c.EndedWhen != "" {
		if err := herd.CheckPort(u.Port()); err != nil {
			errs.Add("ended_when", "%s: %v", u.Redacted(), err)
		}
		if u.User != nil { // the plan and results print it
			errs.Add("ended_when", "%s: credentials in the URL (accepted: a probe without them, such as http://127.0.0.1:8080/healthz)", u.Redacted())
		}
	}
	if c.EndedWhen != "" {
		if c.For > 0 {
			errs.Add("ended_when", "beside command_for (accepted: one end: a probe, a duration, or the command's exit)")
		}
	}
	return errs
}

// CheckChosen requires a command when the plan chooses this trigger, and
// refuses one when it does not: it would never run; so is an undo's
// timeout other than the default without an undo.
func (c *Command) CheckChosen(chosen bool) herd.FieldErrors {
	var errs herd.FieldErrors
	switch {
	case chosen && strings.TrimSpace(c.Run) == "":
		errs.Add("run", "required with trigger command (accepted: a shell command, run with sh -c at T)")
	case !chosen && c.Run != "":
		errs.Add("run", "set, and the plan's trigger is not command, so it would never run (accepted: with trigger command)")
	case !chosen && c.Undo != "":
		errs.Add("undo", "set, and the plan's trigger is not command, so it would never run (accepted: with trigger command)")
	case chosen && c.Undo == "" && c.UndoTimeout != NewCommand().UndoTimeout:
		errs.Add("undo_timeout", "%s, and there is no undo for it to bound (accepted: with undo, or left out)", c.UndoTimeout)
	}
	return errs
}

// Lasts is the longer of the trigger's stated end and the command's
// timeout: the arm must see both over.
func (c *Command) Lasts() (string, time.Duration) {
	if c.For > c.Timeout {
		return "command_for", time.Duration(c.For)
	}
	return "command_timeout", time.Duration(c.Timeout)
}

func (c *Command) Plan(Env) string {
	end := "its exit"
	switch {
	case c.For > 0:
		end = "T+" + c.For.String()
	case c.EndedWhen != "":
		end = fmt.Sprintf("when %s first answers 2xx after its exit, polled every 100 ms for at most %s", c.EndedWhen, herd.Duration(MaxEndProbe))
		if server, ok := c.EndServer(); ok {
			end = fmt.Sprintf("when HAProxy's stats first list server %s UP after its exit, read every 100 ms for at most %s", server, herd.Duration(MaxEndProbe))
		}
	}
	p := fmt.Sprintf("run %q with sh -c (killed after %s; the trigger's end: %s)", c.Run, c.Timeout, end)
	if c.Undo != "" {
		p += fmt.Sprintf("; after the arm, also when it failed or was interrupted, run its undo %q (killed after %s)", c.Undo, c.UndoTimeout)
	}
	return p + "; both on this machine, as you, unsandboxed, with HERDBENCH_ARM, HERDBENCH_T, HERDBENCH_RESULTS_DIR and HERDBENCH_SEED set"
}

// Prepare makes the run's results directory, where the command may write,
// checks before the load that an end probe on the load balancer can end
// (lbServerChecked), and arms the command: its Fire runs it, its Undo
// undoes it.
func (c *Command) Prepare(ctx context.Context, env Env) (Armed, error) {
	if env.ResultsDir != "" {
		if err := os.MkdirAll(env.ResultsDir, 0o755); err != nil {
			return nil, fmt.Errorf("command: results directory: %w", err)
		}
	}
	if server, ok := c.EndServer(); ok {
		if err := lbServerChecked(ctx, env.LB, server); err != nil {
			return nil, err
		}
	}
	return &armedCommand{c: *c}, nil
}

// lbServerChecked fails, before any load, an end probe that could never
// end: a server the load balancer does not list, or one it does not check
// (HAProxy's status "no check": it never marks it down, nor UP again).
func lbServerChecked(ctx context.Context, lb *observe.HAProxy, server string) error {
	if lb == nil {
		return nil // the command line refuses lb:SERVER on a target without haproxy: (choice.hosts)
	}
	st, err := lb.Read(ctx)
	if err != nil {
		return fmt.Errorf("ended_when lb:%s: %w", server, err)
	}
	var names []string
	for _, s := range st.Servers {
		switch {
		case s.Name == server && strings.EqualFold(s.Status, "no check"):
			return fmt.Errorf("ended_when lb:%s: HAProxy does not check %s (status %q), so it never marks it down and UP again, and the trigger would never end (accepted: a server with check on its server line, or a URL)", server, server, s.Status)
		case s.Name == server:
			return nil
		}
		names = append(names, s.Name)
	}
	return fmt.Errorf("ended_when lb:%s: HAProxy's backend %s has no server %s (accepted: %s)", server, lb.Backend, server, strings.Join(names, ", "))
}

// Fire runs the command, then its undo.
func (c *Command) Fire(ctx context.Context, env Env) (Fired, error) {
	a := &armedCommand{c: *c}
	f, err := a.Fire(ctx, env)
	return f, errors.Join(err, a.Undo(ctx))
}

// Environ is what a command's environment adds to herdbench's own: the
// arm, T (RFC 3339, UTC, in nanoseconds), the run's results directory and
// its seed.
func Environ(env Env) []string {
	return []string{
		"HERDBENCH_ARM=" + env.Arm,
		"HERDBENCH_T=" + env.T.UTC().Format(time.RFC3339Nano),
		"HERDBENCH_RESULTS_DIR=" + env.ResultsDir,
		"HERDBENCH_SEED=" + strconv.FormatUint(env.Seed, 10),
	}
}

// armedCommand is one arm's command: whether it started, and its detail,
// which its undo completes.
type armedCommand struct {
	c Command

	mu      sync.Mutex
	env     Env
	started bool
	undone  bool
	detail  *CommandDetail
}

// Fire runs the command; an exit other than 0 fails it, with the output's
// tail. With command_for, it returns once that has passed from T.
func (a *armedCommand) Fire(ctx context.Context, env Env) (Fired, error) {
	d := &CommandDetail{}
	a.mu.Lock()
	a.env, a.started, a.detail = env, true, d
	a.mu.Unlock()
	fired := time.Now()
	downs, err := a.downsAtT(ctx, env)
	if err != nil {
		return Fired{Detail: d}, err
	}
	o, started, exited, err := shell(ctx, a.c.Run, time.Duration(a.c.Timeout), Environ(env))
	d.Outcome, d.StartedMS, d.ExitedMS = o, started.Sub(env.T).Milliseconds(), exited.Sub(env.T).Milliseconds()
	if err != nil {
		return Fired{Detail: d}, fmt.Errorf("command %q: %w", a.c.Run, failure(o, err))
	}
	ended := exited
	switch {
	case a.c.For > 0:
		ended = fired.Add(time.Duration(a.c.For))
		wait(ctx, time.Until(ended))
	case a.c.EndedWhen != "":
		if server, ok := a.c.EndServer(); ok {
			ended = probeLB(ctx, env.LB, server, downs, MaxEndProbe)
		} else {
			ended = probe(ctx, a.c.EndedWhen, MaxEndProbe)
		}
		if !ended.IsZero() {
			d.EndedWhenMS = new(ended.Sub(env.T).Milliseconds())
		}
	}
	return Fired{Detail: d, Ended: ended}, nil
}

// Undo runs the undo once, if the command started, even when ctx has
// ended: the run was interrupted, and the undo is what puts things back.
func (a *armedCommand) Undo(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started || a.undone || a.c.Undo == "" {
		return nil
	}
	a.undone = true
	environ := append(Environ(a.env), "HERDBENCH_EXIT_CODE="+strconv.Itoa(a.detail.ExitCode))
	o, _, _, err := shell(context.WithoutCancel(ctx), a.c.Undo, time.Duration(a.c.UndoTimeout), environ)
	a.detail.Undo = &o
	if err != nil {
		return fmt.Errorf("undo %q: %w", a.c.Undo, failure(o, err))
	}
	return nil
}

// Close frees nothing: the command holds nothing before T.
func (a *armedCommand) Close() {}

// failure is err with the end of the command's output, which says why.
func failure(o Outcome, err error) error {
	out := strings.TrimSpace(o.Output)
	if len(out) > 1024 {
		out = "..." + strings.ToValidUTF8(out[len(out)-1024:], "")
	}
	out = cmp.Or(out, "(no output)")
	return fmt.Errorf("%w: %s", err, out)
}

// probe polls u every 100 ms until it answers 2xx, and returns when it
// first did; zero when it did not within limit, or ctx ended.
func probe(ctx context.Context, u string, limit time.Duration) time.Time {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	client := &http.Client{Timeout: time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil); err == nil {
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 200 && resp.StatusCode < 300 {
					return time.Now()
				}
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}
		case <-tick.C:
		}
	}
}

// downsAtT reads, before the command runs, how many times the load
// balancer's checks had marked the end probe's server down: its end is
// when it is UP again after a time down. A server HAProxy does not list
// fails the trigger, naming those it does.
func (a *armedCommand) downsAtT(ctx context.Context, env Env) (int64, error) {
	server, ok := a.c.EndServer()
	if !ok || env.LB == nil {
		return 0, nil
	}
	st, err := env.LB.Read(ctx)
	if err != nil {
		return 0, fmt.Errorf("ended_when lb:%s: %w", server, err)
	}
	var names []string
	for _, s := range st.Servers {
		if s.Name == server {
			return s.Downs, nil
		}
		names = append(names, s.Name)
	}
	return 0, fmt.Errorf("ended_when lb:%s: HAProxy's backend %s has no server %s (accepted: %s)", server, env.LB.Backend, server, strings.Join(names, ", "))
}

// probeLB reads lb every 100 ms until it lists server UP (HAProxy's word
// for a server its checks put back in rotation) after a time down (its
// checks marked it down since T, downs before then, or it was read not
// UP), and returns when it first did; zero when it did not within limit,
// ctx ended, or there is no lb.
func probeLB(ctx context.Context, lb *observe.HAProxy, server string, downs int64, limit time.Duration) time.Time {
	if lb == nil {
		return time.Time{}
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	wasDown := false
	for {
		if st, err := lb.Read(ctx); err == nil {
			for _, s := range st.Servers {
				if s.Name != server {
					continue
				}
				wasDown = wasDown || s.Status != "UP" || s.Downs > downs
				if s.Status == "UP" && wasDown {
					return time.Now()
				}
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}
		case <-tick.C:
		}
	}
}
