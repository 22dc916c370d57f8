package retry

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Policy
		wantErr string
	}{
		{in: "none", want: Policy{Kind: None}},
		{in: "immediate:3", want: Policy{Kind: Immediate, Retries: 3}},
		{in: "fixed:200ms:2", want: Policy{Kind: Fixed, Base: 200 * time.Millisecond, Retries: 2}},
		{in: "exp:100ms:2s:5", want: Policy{Kind: Exp, Base: 100 * time.Millisecond, Cap: 2 * time.Second, Retries: 5}},
		{in: "full-jitter:50ms:1s:3", want: Policy{Kind: FullJitter, Base: 50 * time.Millisecond, Cap: time.Second, Retries: 3}},
		{in: "equal-jitter:50ms:1s:3", want: Policy{Kind: EqualJitter, Base: 50 * time.Millisecond, Cap: time.Second, Retries: 3}},
		{in: "decorrelated:50ms:1s:3", want: Policy{Kind: Decorrelated, Base: 50 * time.Millisecond, Cap: time.Second, Retries: 3}},
		{in: "", wantErr: `unknown kind ""`},
		{in: "linear:1s:3", wantErr: `unknown kind "linear"`},
		{in: "exp:100ms:3", wantErr: "exp takes 4 parts"},
		{in: "fixed:soon:2", wantErr: `D "soon" is not a duration`},
		{in: "immediate:-1", wantErr: `N "-1" is not a whole number from 1 to 10`},
		{in: "immediate:11", wantErr: "from 1 to 10"},
		{in: "immediate:0", wantErr: "N 0 makes no retries: say none"},
		{in: "fixed:1s:0", wantErr: "N 0 makes no retries: say none"},
		{in: "exp:2s:1s:3", wantErr: "want 0 < BASE <= CAP"},
		{in: "full-jitter:0s:1s:3", wantErr: "want 0 < BASE <= CAP"},
		{in: "none:1", wantErr: "none takes 1 parts"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "accepted: none, immediate:N") {
					t.Fatalf("Parse(%q) error = %v; want one containing %q and the accepted forms", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if back, err := Parse(got.String()); err != nil || back != got {
				t.Errorf("Parse(%q.String() = %q) = %+v, %v; want the same policy", tt.in, got.String(), back, err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"none", "immediate:3", "fixed:1s:2", "exp:1ms:1s:3", "decorrelated:5ms:50ms:10", "full-jitter::", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		// a parsed policy prints a form that parses to itself, within the caps
		if back, err := Parse(p.String()); err != nil || back != p {
			t.Fatalf("Parse(%q) = %+v; its String %q parses to %+v, %v", s, p, p.String(), back, err)
		}
		if p.Retries < 0 || p.Retries > MaxRetries || p.Base < 0 || p.Cap < 0 {
			t.Fatalf("Parse(%q) = %+v; out of the caps", s, p)
		}
	})
}

func TestBackoffFormulas(t *testing.T) {
	base, cp := 100*time.Millisecond, time.Second
	rng := rand.New(rand.NewPCG(1, 2))
	exp := NewBackoff(Policy{Kind: Exp, Base: base, Cap: cp, Retries: 6}, rng)
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		if got := exp.Delay(n, 0); got != want*time.Millisecond {
			t.Errorf("exp Delay(%d) = %v; want %v", n, got, want*time.Millisecond)
		}
	}
	if got := NewBackoff(Policy{Kind: Fixed, Base: base, Retries: 2}, rng).Delay(5, 0); got != base {
		t.Errorf("fixed Delay(5) = %v; want %v", got, base)
	}
	for n := range 6 {
		ceiling := min(cp, base<<n)
		full := NewBackoff(Policy{Kind: FullJitter, Base: base, Cap: cp}, rng)
		equal := NewBackoff(Policy{Kind: EqualJitter, Base: base, Cap: cp}, rng)
		var fullSum time.Duration
		for range 1000 {
			f := full.Delay(n, 0)
			e := equal.Delay(n, 0)
			fullSum += f
			if f < 0 || f >= ceiling {
				t.Fatalf("full-jitter Delay(%d) = %v; want in [0, %v)", n, f, ceiling)
			}
			if e < ceiling/2 || e >= ceiling {
				t.Fatalf("equal-jitter Delay(%d) = %v; want in [%v, %v)", n, e, ceiling/2, ceiling)
			}
		}
		// full jitter is uniform: its mean is half the ceiling
		if mean := fullSum / 1000; mean < ceiling*4/10 || mean > ceiling*6/10 {
			t.Errorf("full-jitter Delay(%d) mean = %v; want about %v", n, mean, ceiling/2)
		}
	}
	dec := NewBackoff(Policy{Kind: Decorrelated, Base: base, Cap: cp}, rng)
	prev := time.Duration(0)
	for n := range 50 {
		d := dec.Delay(n, prev)
		if lim := min(cp, 3*max(prev, base)); d < base || d > lim {
			t.Fatalf("decorrelated Delay(%d, %v) = %v; want in [%v, %v]", n, prev, d, base, lim)
		}
		prev = d
	}
	// every request starts again from base: its first retry is under 3*base
	for range 100 {
		if d := dec.Delay(0, cp); d >= 3*base {
			t.Fatalf("decorrelated first retry after a request that reached the cap = %v; want under %v", d, 3*base)
		}
	}
}

func TestBudgets(t *testing.T) {
	if _, err := ParseBudget("ten percent"); err == nil || !strings.Contains(err.Error(), "accepted: none, a ratio such as 10%") {
		t.Errorf("ParseBudget(\"ten percent\") = %v; want an error listing the accepted forms", err)
	}
	for _, bad := range []string{"0%", "101%", "tokens:0", "tokens:x"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) = nil error; want one", bad)
		}
	}

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	allow := func(s *Spender, at time.Time, timeout bool) bool { _, ok := s.Allow(at, timeout); return ok }

	// a 10% ratio: after 100 failing requests, 10 retries went
	b, _ := ParseBudget("10%")
	s := NewSpender(b)
	allowed := 0
	for range 100 {
		s.Request(t0)
		if allow(s, t0, false) {
			allowed++
		}
	}
	if allowed != 10 {
		t.Errorf("10%% budget: %d retries allowed over 100 failing requests; want 10", allowed)
	}
	// requests older than the window earn nothing: 100 quiet requests, then
	// 20 failing ones 11s later allow 2 retries, not 12
	s = NewSpender(b)
	for range 100 {
		s.Request(t0)
	}
	later, allowed := t0.Add(11*time.Second), 0
	for range 20 {
		s.Request(later)
		if allow(s, later, false) {
			allowed++
		}
	}
	if allowed != 2 {
		t.Errorf("10%% budget: %d retries for 20 failing requests after a quiet minute; want 2: old requests must not bank retries", allowed)
	}

	// the AWS quota: 500 tokens, 5 a retry, 10 after a timeout; a first-
	// attempt success gives 1 back, a successful retry its cost
	b, _ = ParseBudget("tokens")
	s = NewSpender(b)
	n := 0
	for allow(s, t0, false) {
		n++
	}
	if n != 100 {
		t.Errorf("tokens budget: %d retries from a full bucket; want 100 (500/5)", n)
	}
	for range 10 {
		s.Succeeded(0)
	}
	if !allow(s, t0, true) || allow(s, t0, false) {
		t.Error("tokens budget: after 10 first-attempt successes, want exactly one timeout retry (10 tokens) and no more")
	}
	s.Succeeded(TimeoutCost) // that retry succeeded: its 10 come back
	if !allow(s, t0, false) || !allow(s, t0, false) || allow(s, t0, false) {
		t.Error("tokens budget: after a successful timeout retry, want its 10 tokens back: two retries of 5")
	}
}

func TestTextRoundTrip(t *testing.T) {
	for _, in := range []string{"none", "10%", "12.5%", "tokens:500"} {
		b, err := ParseBudget(in)
		if err != nil {
			t.Fatal(err)
		}
		text, _ := b.MarshalText()
		var back Budget
		if err := back.UnmarshalText(text); err != nil || back != b {
			t.Errorf("budget %q -> %q -> %+v, %v; want %+v", in, text, back, err, b)
		}
	}
	p, _ := Parse("decorrelated:10ms:1s:4")
	text, _ := p.MarshalText()
	var back Policy
	if err := back.UnmarshalText(text); err != nil || back != p {
		t.Errorf("policy -> %q -> %+v, %v; want %+v", text, back, err, p)
	}
}

func TestThrottleRejectsByTheSREFormula(t *testing.T) {
	th := NewThrottle(2)
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	refused := 0
	// 1,000 requests over 5 s, the backend accepting one in five: in the
	// long run p = (R - 2A)/(R + 1), about (1000 - 400)/1001
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * 5 * time.Millisecond)
		if th.Reject(at, rng.Float64()) {
			refused++
		}
		if i%5 == 0 {
			th.Accepted(at)
		}
	}
	if refused < 520 || refused > 660 {
		t.Errorf("refused %d of 1000 with 200 accepts; want about 590", refused)
	}
	// nothing refused while the backend accepts everything
	th = NewThrottle(2)
	for i := range 100 {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		if th.Reject(at, 0) {
			t.Fatalf("request %d refused though every request was accepted", i)
		}
		th.Accepted(at)
	}
}
