package edge

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
)

// Patch is what an arm sets of the edges' policy: PUT /admin/config with
// it sets these fields and puts every other back to the edge's start-up
// value, so an arm's policy never depends on the arm before it.
type Patch struct {
	Timeout  *herd.Duration `json:"timeout,omitempty"`
	Retry    *retry.Policy  `json:"retry,omitempty"`
	Budget   *retry.Budget  `json:"retry_budget,omitempty"`
	Breaker  *retry.Breaker `json:"breaker,omitempty"`
	Bulkhead *int           `json:"bulkhead,omitempty"`
	Deadline *herd.Duration `json:"deadline,omitempty"`
}

// Keys are a Patch's keys, as scenario files, --arms and the results
// spell them.
var Keys = []string{"timeout", "retry", "retry_budget", "breaker", "bulkhead", "deadline"}

// Set sets one of the patch's fields from its key and a value in the
// flags' forms; an error says it is the edge's and what is accepted.
func (p *Patch) Set(key, v string) error {
	var err error
	switch key {
	case "timeout", "deadline":
		var d time.Duration
		if d, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("edge %s %q: not a duration (accepted: such as 500ms or 2s)", key, v)
		}
		hd := herd.Duration(d)
		if key == "timeout" {
			p.Timeout = &hd
		} else {
			p.Deadline = &hd
		}
	case "retry":
		err = herd.SetText(&p.Retry, v)
	case "retry_budget":
		err = herd.SetText(&p.Budget, v)
	case "breaker":
		err = herd.SetText(&p.Breaker, v)
	case "bulkhead":
		var n int
		if n, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("edge bulkhead %q: not a whole number (accepted: 0, unbounded, to 100000)", v)
		}
		p.Bulkhead = &n
	default:
		return fmt.Errorf("edge policy key %q: unknown (accepted: %s)", key, strings.Join(Keys, ", "))
	}
	if err != nil {
		return fmt.Errorf("edge %w", err) // "edge breaker "5": ..."
	}
	return nil
}

// Problems are the patch's values out of range, each by its key: the
// fields it sets checked as Config.Problems checks them, so an arm is
// refused before it runs rather than by every edge when it is applied.
func (p Patch) Problems() herd.FieldErrors {
	return p.On(Config{Timeout: herd.Duration(DefaultTimeout)}).Problems()
}

// On is c with the patch's fields set.
func (p Patch) On(c Config) Config {
	setIf(&c.Timeout, p.Timeout)
	setIf(&c.Retry, p.Retry)
	setIf(&c.Budget, p.Budget)
	setIf(&c.Breaker, p.Breaker)
	setIf(&c.Bulkhead, p.Bulkhead)
	setIf(&c.Deadline, p.Deadline)
	return c
}

// setIf sets *to to *v when v is set.
func setIf[T any](to, v *T) {
	if v != nil {
		*to = *v
	}
}

// Counters are the edge tier's counters, summed over its replicas: what
// reached tier A and what it sent on to B.
type Counters struct {
	Requests int64            `json:"requests"` // MetricRequests: every outcome
	Attempts int64            `json:"attempts"` // MetricAttempts: calls to B, retries included
	Outcomes map[string]int64 `json:"outcomes"` // MetricRequests by outcome
	InFlight int64            `json:"-"`        // MetricInFlight: a gauge, read to drain
}

// Fleet administers every edge replica at once, through the testbed's one
// admin client (admin.Client): the edges serve the same admin endpoints.
type Fleet struct{ clients []*admin.Client }

// NewFleet returns the fleet of the edge replicas at urls.
func NewFleet(urls []string) *Fleet {
	f := &Fleet{}
	for _, u := range urls {
		f.clients = append(f.clients, admin.NewClient(u))
	}
	return f
}

// SetConfig puts p on every edge's start-up policy and returns the policy
// they run with now.
func (f *Fleet) SetConfig(ctx context.Context, p Patch) (Config, error) {
	var cfg Config
	for _, c := range f.clients {
		if err := c.Call(ctx, http.MethodPut, admin.PathConfig, p, &cfg); err != nil {
			return Config{}, fmt.Errorf("edge %s: %w", c.URL, err)
		}
	}
	return cfg, nil
}

// Config is the policy the first edge runs with now; SetConfig sets every
// edge's alike.
func (f *Fleet) Config(ctx context.Context) (Config, error) {
	var cfg Config
	if len(f.clients) == 0 {
		return cfg, nil
	}
	err := f.clients[0].Call(ctx, http.MethodGet, admin.PathConfig, nil, &cfg)
	return cfg, err
}

// Reset zeroes every edge's counters and policy state, reseeded.
func (f *Fleet) Reset(ctx context.Context, seed uint64) error {
	for i, c := range f.clients {
		if err := c.Call(ctx, http.MethodPost, admin.PathReset, admin.ResetRequest{Seed: new(seed + uint64(i))}, nil); err != nil {
			return fmt.Errorf("edge %s: %w", c.URL, err)
		}
	}
	return nil
}

// Counters sums every edge's counters.
func (f *Fleet) Counters(ctx context.Context) (Counters, error) {
	sum := Counters{Outcomes: map[string]int64{}}
	for _, c := range f.clients {
		mfs, err := c.Metrics(ctx)
		if err != nil {
			return Counters{}, err
		}
		sum.Requests += mfs.Sum(MetricRequests)
		sum.Attempts += mfs.Sum(MetricAttempts)
		sum.InFlight += mfs.Sum(MetricInFlight)
		for _, o := range outcomes {
			sum.Outcomes[o] += mfs.Sum(MetricRequests, "outcome", o)
		}
	}
	return sum, nil
}
