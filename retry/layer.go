package retry

import (
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Layer is what one layer of a call chain does on its calls to the next:
// each attempt's timeout, the retries after a failed one and what bounds
// them, a circuit breaker, a bulkhead, and the deadline it passes on. The
// testbed's edge replicas run one (their policy on their calls to the API
// replicas); the zero value of each protection is off.
type Layer struct {
	Timeout  herd.Duration `json:"timeout"`      // each attempt's own
	Retry    Policy        `json:"retry"`        // after a failed attempt
	Budget   Budget        `json:"retry_budget"` // bounds the retries over all of the layer's requests
	Breaker  Breaker       `json:"breaker"`      // on its calls: FAILURES consecutive failures open it for OPEN
	Bulkhead int           `json:"bulkhead"`     // requests calling the next layer at once at most, the rest refused; 0: unbounded
	// Deadline is the time the layer gives each request in all, attempts
	// and backoff included, shortened by the caller's own deadline header;
	// it passes what is left on to the next layer, so that one does not
	// work for an answer nobody waits for. 0: no deadline.
	Deadline herd.Duration `json:"deadline"`
}

// Problems says what is wrong with c, each by its field and with the
// accepted values.
func (c Layer) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	bad := errs.Add
	if c.Timeout < herd.Duration(time.Millisecond) || c.Timeout > herd.Duration(time.Minute) {
		bad("timeout", "%s out of range (accepted: 1ms to 1m)", c.Timeout)
	}
	if c.Bulkhead < 0 || c.Bulkhead > 100000 {
		bad("bulkhead", "%d out of range (accepted: 0, unbounded, to 100000)", c.Bulkhead)
	}
	if c.Deadline < 0 || c.Deadline > herd.Duration(time.Hour) {
		bad("deadline", "%s out of range (accepted: 0, none, to 1h)", c.Deadline)
	}
	return errs
}

// String is the policy in the short forms the flags take.
func (c Layer) String() string {
	parts := []string{"timeout " + c.Timeout.String(), "retry " + c.Retry.String()}
	if c.Budget.Kind != "" && c.Budget.Kind != None {
		parts = append(parts, "budget "+c.Budget.String())
	}
	if c.Breaker.Failures > 0 {
		parts = append(parts, "breaker "+c.Breaker.String())
	}
	if c.Bulkhead > 0 {
		parts = append(parts, fmt.Sprintf("bulkhead %d", c.Bulkhead))
	}
	if c.Deadline > 0 {
		parts = append(parts, "deadline "+c.Deadline.String())
	}
	return strings.Join(parts, ", ")
}
