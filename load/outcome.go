package load

import (
	"slices"
	"strings"
)

// Outcome is how one request ended. Each request has exactly one.
type Outcome uint8

// The outcomes, in the order reports list them.
const (
	OK          Outcome = iota // 2xx
	Timeout                    // no response within the client timeout
	Conn                       // connection refused, reset or closed
	Error5xx                   // a 5xx other than 503
	Shed                       // 429 or 503 (Config.ShedStatuses): the service refused the load
	Other                      // any other status: a 3xx, or a 4xx the target counts as a failure (Statuses' Fail)
	Throttled                  // refused by the client itself (adaptive throttling): never sent
	BreakerOpen                // refused by the client's own open circuit breaker: never sent
	Unsent                     // never sent: the generator was still behind its schedule LateGrace after the load ended
	Status4xx                  // a 4xx: the service answered that it has no such thing, or refused the request; not a failure
	NumOutcomes                // how many outcomes there are
)

// Outcomes lists every outcome.
var Outcomes = []Outcome{OK, Timeout, Conn, Error5xx, Shed, Other, Throttled, BreakerOpen, Unsent, Status4xx}

var outcomeNames = [...]string{"ok", "timeout", "conn", "5xx", "shed", "other", "throttled", "client_breaker", "unsent", "4xx"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// DefaultShedStatuses are the statuses that mean a service refused the
// load: 429 Too Many Requests and 503 Service Unavailable.
var DefaultShedStatuses = []int{429, 503}

// Shedding is the statuses that mean the service shed the load; nil or
// empty: DefaultShedStatuses. A status outside it is what its class says
// (another 5xx an error, another 4xx Status4xx): a load balancer's own 503
// when no server is up is no server's shedding, and a target can say so.
type Shedding []int

// sheds says whether code means shedding.
func (s Shedding) sheds(code int) bool {
	if len(s) == 0 {
		s = DefaultShedStatuses
	}
	return slices.Contains(s, code)
}

// Classify maps a response status (0 when there was none) and the client's
// error to an Outcome.
func (s Shedding) Classify(code int, err string) Outcome {
	switch {
	case code == 0 && strings.Contains(err, errThrottled.Error()):
		return Throttled
	case code == 0 && strings.Contains(err, errBreakerOpen.Error()):
		return BreakerOpen
	case code == 0 && isTimeout(err):
		return Timeout
	case code == 0:
		return Conn
	case code >= 200 && code < 300:
		return OK
	case s.sheds(code):
		return Shed
	case code >= 500 && code < 600:
		return Error5xx
	case code >= 400 && code < 500:
		return Status4xx
	default:
		return Other
	}
}

// Statuses is what a target's statuses mean: those it sheds the load with
// (Shed), and the 4xx it counts as failures (Fail: outcome Other, a drop,
// not retried); any other 4xx is Status4xx, an answer.
type Statuses struct {
	Shed Shedding
	Fail []int
}

// Classify is Shedding's, with a 4xx that s.Fail names a failure (Other).
func (s Statuses) Classify(code int, err string) Outcome {
	o := s.Shed.Classify(code, err)
	if o == Status4xx && slices.Contains(s.Fail, code) {
		return Other
	}
	return o
}

// Answered says whether o is an answer the service meant, not a failure
// and not a refusal of the load: a 2xx, or a 4xx (Status4xx). The rows'
// goodput counts them.
func (o Outcome) Answered() bool { return o == OK || o == Status4xx }

func isTimeout(err string) bool {
	return strings.Contains(err, "Timeout") || strings.Contains(err, "timeout") ||
		strings.Contains(err, "deadline exceeded")
}
