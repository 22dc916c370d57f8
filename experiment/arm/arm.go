package arm

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
)

// Arm is one configuration of the service, or of its clients, under the
// same experiment. The client fields are set only when the arm sets them.
type Arm struct {
	Name string `json:"name"`
	// Knobs is what the arm sets of the replicas' config: its strategy and
	// the knobs it names; the rest stays as the testbed was started
	Knobs    herd.Settings  `json:"knobs,omitempty"`
	Retry    *retry.Policy  `json:"retry,omitempty"`          // the clients' policy in this arm
	Budget   *retry.Budget  `json:"retry_budget,omitempty"`   // what bounds the clients' retries in this arm
	Throttle *float64       `json:"throttle,omitempty"`       // the clients' adaptive throttling K in this arm
	Hedge    *retry.Hedge   `json:"hedge,omitempty"`          // the clients' hedging in this arm
	Breaker  *retry.Breaker `json:"client_breaker,omitempty"` // the clients' circuit breaker in this arm
	// Edge is what the arm sets of the edge replicas' policy (a two-tier
	// testbed); the rest is theirs from testbed up
	Edge herd.Settings `json:"edge,omitempty"`
	// Select is how the arm is chosen on a service herdbench does not
	// control; Knobs is then unused
	Select *Select `json:"select,omitempty"`
}

// Select chooses an arm on a service herdbench does not control: headers
// and query values sent with every request, commands run before and after
// the arm (a feature-flag CLI call, say).
type Select struct {
	Headers map[string]string `json:"-"` // may hold secrets: results name them only
	Query   map[string]string `json:"query,omitempty"`
	Before  []string          `json:"before,omitempty"`
	After   []string          `json:"after,omitempty"`
	// Secret are the headers whose values came from the environment: a
	// dry run shows the other headers' values, never these
	Secret []string `json:"-"`
	// Endpoints are the arm's own base URLs, instead of the target's
	Endpoints []string `json:"endpoints,omitempty"`
	// Backend is the load balancer's backend they reach, whose counters
	// are the arm's lb.*; "": the target's
	Backend string `json:"backend,omitempty"`
}

// MarshalJSON writes the header names, never their values.
func (s Select) MarshalJSON() ([]byte, error) {
	type plain Select
	names := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	return json.Marshal(struct {
		Headers []string `json:"headers,omitempty"`
		plain
	}{names, plain(s)})
}

// UnmarshalJSON reads what MarshalJSON wrote: the header names, with no
// values (results never had them), so a saved run renders again as it was.
func (s *Select) UnmarshalJSON(b []byte) error {
	type plain Select
	var v struct {
		Headers []string `json:"headers"`
		plain
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Select(v.plain)
	if len(v.Headers) > 0 {
		s.Headers = map[string]string{}
		for _, h := range v.Headers {
			s.Headers[h] = ""
		}
	}
	return nil
}

// Apply is base with the arm's headers, and the arm's query values.
func (s *Select) Apply(base http.Header) (http.Header, url.Values) {
	h := base.Clone()
	if s == nil {
		return h, nil
	}
	if h == nil {
		h = http.Header{}
	}
	for k, v := range s.Headers {
		h.Set(k, v)
	}
	q := url.Values{}
	for k, v := range s.Query {
		q.Set(k, v)
	}
	return h, q
}

// Clients is what every virtual client does in one arm: the plan's client
// policies with the arm's own in their place. Results carry it, so every
// figure is tied to the policies that produced it.
type Clients struct {
	Count    int           `json:"count"`
	Retry    retry.Policy  `json:"retry"`
	Budget   retry.Budget  `json:"retry_budget"`
	Throttle float64       `json:"throttle"`
	Hedge    retry.Hedge   `json:"hedge"`
	Breaker  retry.Breaker `json:"client_breaker"`
	Critical float64       `json:"critical"`
}
