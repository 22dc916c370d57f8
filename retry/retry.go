// Package retry provides the policies herd clients (and the edge replicas,
// calling the API replicas) ship against a struggling service, in the short
// forms herdbench's flags, arms and scenario files use: retry policies and
// the budgets that bound them, adaptive throttling, a circuit breaker, and
// hedging gated on the client's error rate.
//
// Each policy type reads its short form with UnmarshalText and writes it
// with MarshalText, so a flag holds the typed value (pflag's TextVar), a
// scenario file's value goes through the same method, and results read
// back; errors name the value and list the accepted forms (Forms,
// BudgetForms, HedgeForms, BreakerForms).
//
// Backoffs follow Brooker, "Exponential Backoff And Jitter" (AWS
// Architecture Blog, 2015), attempt n counting from 0 for the first retry:
//
//	exp:          min(cap, base * 2^n)
//	full-jitter:  random(0, min(cap, base * 2^n))
//	equal-jitter: t/2 + random(0, t/2), t = min(cap, base * 2^n)
//	decorrelated: min(cap, random(base, 3 * previous)), previous starting at
//	              base for each request
//
// Randomness comes from the caller's seeded source.
package retry

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Kinds of policy, the one list of valid names.
const (
	None         = "none"
	Immediate    = "immediate"
	Fixed        = "fixed"
	Exp          = "exp"
	FullJitter   = "full-jitter"
	EqualJitter  = "equal-jitter"
	Decorrelated = "decorrelated"
)

// Forms lists every accepted form, for help text and errors.
var Forms = []string{"none", "immediate:N", "fixed:D:N", "exp:BASE:CAP:N", "full-jitter:BASE:CAP:N",
	"equal-jitter:BASE:CAP:N", "decorrelated:BASE:CAP:N"}

// MaxRetries caps N: a policy is a client's, not a load generator's.
const MaxRetries = 10

// Policy is a parsed retry policy.
type Policy struct {
	Kind    string
	Retries int           // N: retries after the first attempt
	Base    time.Duration // D for fixed
	Cap     time.Duration
}

// String is the policy's short form, which Parse reads back.
func (p Policy) String() string {
	switch p.Kind {
	case None, "":
		return None
	case Immediate:
		return fmt.Sprintf("%s:%d", p.Kind, p.Retries)
	case Fixed:
		return fmt.Sprintf("%s:%s:%d", p.Kind, p.Base, p.Retries)
	}
	return fmt.Sprintf("%s:%s:%s:%d", p.Kind, p.Base, p.Cap, p.Retries)
}

// MarshalText writes the short form, so results show policies as typed.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads the short form.
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	*p = v
	return err
}

// Parse reads a policy such as "full-jitter:100ms:2s:3". Errors name the
// part that is wrong and list the accepted forms.
func Parse(s string) (Policy, error) {
	bad := func(format string, args ...any) (Policy, error) {
		return Policy{}, fmt.Errorf("retry policy %q: %s (accepted: %s)", s, fmt.Sprintf(format, args...), strings.Join(Forms, ", "))
	}
	parts := strings.Split(s, ":")
	kind := parts[0]
	want := map[string]int{None: 1, Immediate: 2, Fixed: 3, Exp: 4, FullJitter: 4, EqualJitter: 4, Decorrelated: 4}
	n, ok := want[kind]
	if !ok {
		return bad("unknown kind %q", kind)
	}
	if len(parts) != n {
		return bad("%s takes %d parts separated by ':', got %d", kind, n, len(parts))
	}
	p := Policy{Kind: kind}
	if kind == None {
		return p, nil
	}
	retries, err := strconv.Atoi(parts[n-1])
	if err != nil || retries < 0 || retries > MaxRetries {
		return bad("N %q is not a whole number from 1 to %d", parts[n-1], MaxRetries)
	}
	if retries == 0 { // a policy that never retries is none, and an arm of it would read as retrying
		return bad("N 0 makes no retries: say none")
	}
	p.Retries = retries
	dur := func(name, v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return 0, fmt.Errorf("%s %q is not a duration from 0 to 1m, such as 100ms", name, v)
		}
		return d, nil
	}
	switch kind {
	case Fixed:
		if p.Base, err = dur("D", parts[1]); err != nil {
			return bad("%v", err)
		}
	case Exp, FullJitter, EqualJitter, Decorrelated:
		if p.Base, err = dur("BASE", parts[1]); err != nil {
			return bad("%v", err)
		}
		if p.Cap, err = dur("CAP", parts[2]); err != nil {
			return bad("%v", err)
		}
		if p.Base == 0 || p.Cap < p.Base {
			return bad("want 0 < BASE <= CAP, got %s and %s", p.Base, p.Cap)
		}
	}
	return p, nil
}

// Backoff is one client's retry schedule, drawing from the client's random
// source. It is not safe for concurrent use.
type Backoff struct {
	p   Policy
	rng *rand.Rand
}

// NewBackoff returns a schedule for p drawing from rng.
func NewBackoff(p Policy, rng *rand.Rand) *Backoff { return &Backoff{p: p, rng: rng} }

// Retries is how many retries the policy allows after the first attempt.
func (b *Backoff) Retries() int {
	if b.p.Kind == None {
		return 0
	}
	return b.p.Retries
}

// Delay is the wait before retry n (0 for the first retry) of a request
// whose previous wait was prev (decorrelated jitter grows from it; it
// starts at base for every request).
func (b *Backoff) Delay(n int, prev time.Duration) time.Duration {
	p := b.p
	expo := func() time.Duration {
		d := p.Base
		for range n {
			if d >= p.Cap {
				return p.Cap
			}
			d *= 2
		}
		return min(d, p.Cap)
	}
	switch p.Kind {
	case Fixed:
		return p.Base
	case Exp:
		return expo()
	case FullJitter:
		return b.between(0, expo())
	case EqualJitter:
		t := expo()
		return t/2 + b.between(0, t/2)
	case Decorrelated:
		if n == 0 || prev < p.Base {
			prev = p.Base
		}
		return min(p.Cap, b.between(p.Base, 3*prev))
	}
	return 0 // none, immediate
}

// between draws uniformly from [lo, hi).
func (b *Backoff) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(b.rng.Int64N(int64(hi-lo)))
}

// Budget bounds one client's retries. The zero Budget allows every retry.
type Budget struct {
	Kind   string  // "", "ratio" or "tokens"
	Ratio  float64 // ratio: retries/requests must stay under it
	Tokens int     // tokens: the bucket's capacity
}

// Budget costs of the tokens kind, as the AWS SDKs' standard retry quota.
const (
	RetryCost     = 5  // a retry after an error
	TimeoutCost   = 10 // a retry after a timeout
	SuccessRefund = 1  // a request that succeeded at its first attempt
	defaultBucket = 500
)

// BudgetForms lists the accepted forms of a budget, for help text and
// errors.
var BudgetForms = []string{"none", "a ratio such as 10%", "tokens (500, the AWS SDKs' quota)", "tokens:N"}

var budgetAccepted = "accepted: " + strings.Join(BudgetForms, ", ")

// String is the budget's short form.
func (b Budget) String() string {
	switch b.Kind {
	case "ratio":
		return strconv.FormatFloat(b.Ratio*100, 'g', -1, 64) + "%"
	case "tokens":
		return "tokens:" + strconv.Itoa(b.Tokens)
	}
	return "none"
}

// MarshalText writes the short form.
func (b Budget) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads the short form, so results read back.
func (b *Budget) UnmarshalText(text []byte) error {
	v, err := ParseBudget(string(text))
	*b = v
	return err
}

// ParseBudget reads "none", "10%", "tokens" or "tokens:N".
func ParseBudget(s string) (Budget, error) {
	switch {
	case s == "" || s == "none":
		return Budget{}, nil
	case s == "tokens":
		return Budget{Kind: "tokens", Tokens: defaultBucket}, nil
	case strings.HasPrefix(s, "tokens:"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "tokens:"))
		if err != nil || n < 1 {
			return Budget{}, fmt.Errorf("retry budget %q: the bucket must be a whole number of tokens, 1 or more (%s)", s, budgetAccepted)
		}
		return Budget{Kind: "tokens", Tokens: n}, nil
	case strings.HasSuffix(s, "%"):
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return Budget{}, fmt.Errorf("retry budget %q: the ratio must be above 0%% and at most 100%% (%s)", s, budgetAccepted)
		}
		return Budget{Kind: "ratio", Ratio: v / 100}, nil
	}
	return Budget{}, fmt.Errorf("retry budget %q: unknown form (%s)", s, budgetAccepted)
}

// RatioWindow is how far back a ratio budget counts: requests and retries
// older than this no longer earn or spend it, so a quiet warmup does not
// save up retries for the first failure.
const RatioWindow = windowLen

// Spender is one client's running account against a Budget. It is not safe
// for concurrent use.
type Spender struct {
	b      Budget
	tokens int
	recent window // ratio: requests (a) and retries (b) over the last RatioWindow
}

// NewSpender starts an account with a full bucket.
func NewSpender(b Budget) *Spender { return &Spender{b: b, tokens: b.Tokens} }

// Request records a new request at now.
func (s *Spender) Request(now time.Time) { s.recent.add(now, 1, 0) }

// Allow reports whether a retry may go at now, after an error that was a
// timeout or not, and charges it if so. cost is what a success of this
// retry gives back (tokens budgets).
func (s *Spender) Allow(now time.Time, timeout bool) (cost int, ok bool) {
	switch s.b.Kind {
	case "ratio":
		requests, retries := s.recent.sum(now)
		if float64(retries+1) > s.b.Ratio*float64(requests) {
			return 0, false
		}
	case "tokens":
		cost = RetryCost
		if timeout {
			cost = TimeoutCost
		}
		if s.tokens < cost {
			return 0, false
		}
		s.tokens -= cost
	}
	s.recent.add(now, 0, 1)
	return cost, true
}

// Succeeded records a request that succeeded. For tokens budgets, as the
// AWS SDKs' quota: a success at the first attempt gives SuccessRefund back,
// a success after a retry gives that retry's cost back.
func (s *Spender) Succeeded(retryCost int) {
	if s.b.Kind != "tokens" {
		return
	}
	refund := SuccessRefund
	if retryCost > 0 {
		refund = retryCost
	}
	s.tokens = min(s.b.Tokens, s.tokens+refund)
}

// window counts two things per second over the last ten seconds.
type window struct {
	secs [10]struct {
		sec  int64
		a, b int
	}
}

const windowLen = 10 * time.Second

func (w *window) add(now time.Time, a, b int) {
	sec := now.Unix()
	sl := &w.secs[sec%int64(len(w.secs))]
	if sl.sec != sec {
		sl.sec, sl.a, sl.b = sec, 0, 0
	}
	sl.a += a
	sl.b += b
}

func (w *window) sum(now time.Time) (a, b int) {
	for _, sl := range w.secs {
		if sl.sec > now.Unix()-int64(len(w.secs)) {
			a, b = a+sl.a, b+sl.b
		}
	}
	return a, b
}

// ThrottleWindow is how far back adaptive throttling counts.
const ThrottleWindow = windowLen

// Throttle is adaptive throttling from the Google SRE book ("Handling
// Overload"): a client refuses an attempt itself with probability
// max(0, (requests - K*accepts) / (requests + 1)), counted over the last
// ThrottleWindow, so a backend that refuses most work sees about K attempts
// per one it accepts. It is not safe for concurrent use.
type Throttle struct {
	k      float64
	recent window // requests (a) and accepts (b)
}

// MaxThrottle bounds K: past it a client refuses almost nothing.
const MaxThrottle = 100

const throttleAccepted = "accepted: 0, off, or K above 0 and at most 100; the SRE book uses 2"

// CheckThrottle says whether k is a K adaptive throttling takes: 0 (off)
// or above 0 and at most MaxThrottle. It is the one rule for --throttle,
// throttle= arms and scenario files.
func CheckThrottle(k float64) error {
	if !(k >= 0 && k <= MaxThrottle) { // NaN too
		return fmt.Errorf("%g out of range (%s)", k, throttleAccepted)
	}
	return nil
}

// ParseThrottle reads K, such as "2".
func ParseThrottle(s string) (float64, error) {
	k, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("K %q is not a number (%s)", s, throttleAccepted)
	}
	return k, CheckThrottle(k)
}

// NewThrottle returns adaptive throttling with multiplier k (the book uses 2).
func NewThrottle(k float64) *Throttle { return &Throttle{k: k} }

// Reject counts an attempt at now and says whether to refuse it, given a
// uniform draw in [0, 1).
func (t *Throttle) Reject(now time.Time, draw float64) bool {
	requests, accepts := t.recent.sum(now)
	t.recent.add(now, 1, 0)
	p := max(0, (float64(requests)-t.k*float64(accepts))/float64(requests+1))
	return draw < p
}

// Accepted records an attempt the backend did not refuse.
func (t *Throttle) Accepted(now time.Time) { t.recent.add(now, 0, 1) }
