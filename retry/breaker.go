package retry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Breaker is a circuit breaker on a caller's own calls: after Failures
// consecutive failed attempts the caller refuses attempts itself for Open,
// then lets one trial through, whose outcome closes or reopens it. The herd
// clients have one (client_breaker) and so do the edge replicas (the edge
// breaker); its errors name neither, so each caller says whose it is. The
// zero Breaker is off.
type Breaker struct {
	Failures uint32
	Open     time.Duration
}

// BreakerForms lists the accepted forms, for help text and errors.
var BreakerForms = []string{"none", "FAILURES:OPEN such as 5:2s"}

var breakerAccepted = "accepted: " + strings.Join(BreakerForms, ", or ")

// ParseBreaker reads "none" or "5:2s".
func ParseBreaker(s string) (Breaker, error) {
	if s == "" || s == None {
		return Breaker{}, nil
	}
	ns, ds, ok := strings.Cut(s, ":")
	if !ok {
		return Breaker{}, fmt.Errorf("breaker %q: want two parts separated by ':' (%s)", s, breakerAccepted)
	}
	n, err := strconv.ParseUint(ns, 10, 32)
	if err != nil || n < 1 || n > 1000 {
		return Breaker{}, fmt.Errorf("breaker %q: FAILURES %q is not a whole number from 1 to 1000 (%s)", s, ns, breakerAccepted)
	}
	d, err := time.ParseDuration(ds)
	if err != nil || d < time.Millisecond || d > time.Minute {
		return Breaker{}, fmt.Errorf("breaker %q: OPEN %q is not a duration from 1ms to 1m (%s)", s, ds, breakerAccepted)
	}
	return Breaker{Failures: uint32(n), Open: d}, nil
}

// String is the short form, which ParseBreaker reads back.
func (b Breaker) String() string {
	if b.Failures == 0 {
		return None
	}
	return strconv.FormatUint(uint64(b.Failures), 10) + ":" + b.Open.String()
}

// MarshalText writes the short form.
func (b Breaker) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads the short form.
func (b *Breaker) UnmarshalText(text []byte) error {
	v, err := ParseBreaker(string(text))
	*b = v
	return err
}
