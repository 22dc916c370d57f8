package targets

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Load is what a plan would send to a target, for its caps.
type Load struct {
	Rate     int           // requests/s
	PerArm   time.Duration // one arm's warmup + before + after
	Burst    int           // requests the burst trigger releases at once; 0 without it
	Attempts float64       // the most attempts one request may make: retries + 1, doubled by hedging
	// Deadline is the clients' longest whole deadline: every attempt of a
	// request, each its timeout, and the backoff between them; on the arm
	// DeadlineArm, whose policy DeadlineWhy says in words
	Deadline                 time.Duration
	DeadlineArm, DeadlineWhy string
}

// CheckLimits refuses a plan over the target's caps (limits: in its file),
// naming the cap, where it is set, and what would fit. The rate cap bounds
// the worst case: every request with every retry and hedge it may make.
func (t *Target) CheckLimits(l Load) herd.FieldErrors {
	var errs herd.FieldErrors
	where := t.Name
	if t.file != nil {
		where = t.file.doc.At("limits")
	}
	if max := t.Limits.MaxRate; max > 0 {
		worst := float64(l.Rate) * math.Max(l.Attempts, 1)
		switch {
		case l.Rate > max:
			errs.Add("rate", "%d requests/s is over the target's cap of %d (limits.max_rate, %s; accepted: 1 to %d)", l.Rate, max, where, max)
		case worst > float64(max):
			errs.Add("rate", "%d requests/s with up to %g attempts each can send %.0f/s, over the target's cap of %d (limits.max_rate, %s; accepted: rate x attempts <= %d: a lower --rate, fewer retries or a retry budget)",
				l.Rate, l.Attempts, worst, max, where, max)
		}
		if l.Burst > max {
			errs.Add("burst", "%d requests at once is over the target's cap of %d requests/s (limits.max_rate, %s; accepted: 1 to %d)", l.Burst, max, where, max)
		}
	}
	if max := t.Limits.Duration(); max > 0 && l.PerArm > max {
		e := &herd.FieldError{Field: "after", Err: herd.ErrTooLong,
			Msg: fmt.Sprintf("warmup + before + after = %s exceeds the target's cap of %s per arm (limits.max_duration, %s; accepted: at most %s)", l.PerArm, max, where, max)}
		if t.file != nil { // the cap, told as the file's when the user set none of the three
			e.Other = &herd.FieldError{File: t.Name, Line: t.Line("limits.max_duration"), Field: "limits.max_duration", Err: herd.ErrTooLong,
				Msg: fmt.Sprintf("%s is shorter than an arm, warmup + before + after = %s (accepted: %s or more; or a shorter --after, --warmup or --before)", max, l.PerArm, l.PerArm)}
		}
		errs = append(errs, e)
	}
	if d := t.Limits.Drain(); d > 0 && d < l.Deadline {
		e := &herd.FieldError{File: t.Name, Line: t.Line("limits.max_drain"), Field: "limits.max_drain",
			Msg: fmt.Sprintf("%s is shorter than the clients' whole deadline on arm %s, %s (%s): the drain would give up on work a client may still wait for (accepted: %s or more; or leave the key out, for the longer of 15s and that deadline; or a shorter --timeout or --retry)",
				d, l.DeadlineArm, l.Deadline, l.DeadlineWhy, l.Deadline)}
		errs = append(errs, e)
	}
	return errs
}

// Observes is what of a target herdbench may observe: the figures of what
// it does not are null.
type Observes struct {
	DB    bool // its Postgres or MySQL: db.*
	Cache bool // its Redis or Memcached: cache.*
	API   bool // the testbed's replicas' own counters: api.*
	// Layers: a two-tier testbed's edge tier, its policy and counters
	// (edge.*) and the call chain's layers (layers.*)
	Layers bool
	LB     bool // a load balancer's own counters (haproxy:): lb.*
}

// Observes says what herdbench may observe of t, before connecting to it.
func (t *Target) Observes() Observes {
	if t.Grants.Observed != nil {
		return *t.Grants.Observed
	}
	f := t.file
	return Observes{DB: f != nil && (f.Postgres != nil || f.MySQL != nil), Cache: f != nil && (f.Redis != nil || f.Memcached != nil),
		LB: t.HAProxy != nil}
}

// CheckHosts refuses a target that touches a host that is not loopback and
// not allowed, by the target file or by allow (--allow-host), naming it.
func (t *Target) CheckHosts(allow []string) error {
	var errs []error
	for _, h := range slices.Sorted(maps.Keys(t.Hosts)) {
		if Loopback(h) || Allowed(h, t.Allow, allow) {
			continue
		}
		msg := fmt.Sprintf("host %s is not loopback and not allowed (accepted: loopback; or list it under allow: in the target file, or --allow-host %s)", h, h)
		if path := t.Hosts[h]; t.file != nil && t.file.doc.Line(path) > 0 { // the file's, at its line
			errs = append(errs, &herd.FieldError{File: t.Name, Line: t.file.doc.Line(path), Field: path, Msg: msg})
		} else if flag, ok := strings.CutPrefix(path, "--"); ok { // a flag's (or the scenario key it stands for)
			errs = append(errs, &herd.FieldError{Field: strings.ReplaceAll(flag, "-", "_"), Msg: msg})
		} else {
			errs = append(errs, fmt.Errorf("%s: %s", path, msg))
		}
	}
	return errors.Join(errs...)
}

// NonLoopback lists the hosts the target touches that are not this machine.
func (t *Target) NonLoopback() []string {
	var out []string
	for h := range t.Hosts {
		if !Loopback(h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// declared is "file:line: field" for a field of a file target: the line
// of field, or of the nearest section above it that the file has (a key
// it left out, such as memcached.allow_flush_all).
func (t *Target) declared(field string) string {
	if t.file == nil {
		return field
	}
	for p := field; p != ""; {
		if line := t.file.doc.Line(p); line > 0 {
			return fmt.Sprintf("%s:%d: %s", t.file.doc.Name, line, field)
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return t.file.doc.Name + ": " + field
}

// Rollback undoes what a killed run may have left: every toxic and closed
// proxy where the target grants it (ResetProxies: the testbed's); elsewhere the toxics herdbench names and the
// declared proxies it may have closed. Redis pauses end by themselves.
func (t *Target) Rollback() error {
	if t.Toxiproxy == nil {
		return nil
	}
	if t.Grants.ResetProxies {
		return t.Toxiproxy.ResetState()
	}
	var errs []error
	for _, name := range t.Proxies {
		p, err := t.Toxiproxy.Proxy(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		toxics, err := p.Toxics()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, tx := range toxics {
			if strings.HasPrefix(tx.Name, "herdbench-") {
				errs = append(errs, p.RemoveToxic(tx.Name))
			}
		}
		if !p.Enabled {
			errs = append(errs, p.Enable())
		}
	}
	return errors.Join(errs...)
}

// CheckHost refuses what is not a host as a target's URLs name it (a
// scheme, a port or a path would match no host, and allow nothing), and a
// wildcard: hosts are matched exactly (Allowed), so *.example would allow
// nothing either.
func CheckHost(h string) error {
	const accepted = "accepted: a host as it appears in the URLs, such as staging.internal or 10.0.0.5"
	switch {
	case h == "" || strings.ContainsAny(h, "/: "):
		return fmt.Errorf("%q is not a host name or address (%s)", h, accepted)
	case strings.ContainsAny(h, "*?[]"):
		return fmt.Errorf("%q is a wildcard, and hosts are matched exactly, so it allows nothing (%s; list each host)", h, accepted)
	}
	return nil
}

// Allowed says whether host is in one of the lists of allowed hosts: the
// same name, whatever its case (host names are case-insensitive, as curl
// and nginx read them), or the same address.
func Allowed(host string, lists ...[]string) bool {
	for _, l := range lists {
		if slices.ContainsFunc(l, func(a string) bool { return strings.EqualFold(a, host) }) {
			return true
		}
	}
	return false
}
