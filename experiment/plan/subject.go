package plan

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/scenario"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// ArmAt is where an arm runs: its place in the plan and the run's
// results directory, for what a subject runs for the arm (a service's
// hooks) to save what it saw beside the results.
type ArmAt struct {
	Index      int    // the arm's place in the plan's arms, from 0: the results' arms[Index]
	ResultsDir string // the run's results directory; "" when the run writes none
}

// Subject is what an experiment works on, arm after arm. It is where an
// arm is applied: the bundled testbed (package testbed/subject), whose
// replicas herdbench configures, fills and counts, a service it does not
// control (package service), whose arms are chosen by hooks,
// headers and query values, or any other kind a caller brings (Env).
// Run asks a Subject and its optional seams below, never which it has.
type Subject interface {
	// Keep returns what puts the subject back as the run found it.
	Keep(ctx context.Context) (restore func())
	// Apply applies arm, which runs where at says, before its fill.
	// Applied.After undoes it once the arm has run, whether it failed or
	// not.
	Apply(ctx context.Context, arm arm.Arm, at ArmAt) (Applied, error)
	// Fill fills the cache the same way before every arm and leaves the
	// service ready for the load, as Apply left it: hot are the hot keys,
	// trig the trigger (an Aligner wants its keys warmed to end at T).
	Fill(ctx context.Context, p Plan, arm Applied, trig triggers.Trigger, hot []string) (result.Warm, error)
	// Counters reads the service's own counters, named as its kind
	// declared them (result.DeclareCounters); nil when it has none.
	Counters(ctx context.Context) (result.Counters, error)
	// Drain waits until none of the arm's work runs in the service any
	// more, so none of it lands in the next arm's figures, and says what
	// it waited on (nil: it says nothing). An error that wraps
	// ErrStillRunning is a drain that gave up with work running: the arm
	// is measured all the same, with a warning; any other error fails
	// the arm.
	Drain(ctx context.Context) (*result.DrainWaits, error)
	// FillPlan says what Fill does, for a dry run; it contacts nothing.
	FillPlan(p Plan, hot []string) string
	// FillRequests is how many requests Fill sends for a plan, for the dry
	// run's count.
	FillRequests(p Plan, hot []string) int64
}

// Kind is a kind of subject as a run prepares it: everything the run
// needs of it before it starts, asked in this order by the command line's
// one prepare path, which never asks which kind it holds. The bundled
// testbed (testbed/subject's FigureKind) and a user's service (package service)
// are two; a caller may bring its own.
type Kind interface {
	// Plan is g's plan with the values the kind sets of it (a target
	// file's plan:), and the options it would drop without a word refused.
	Plan(g Given) (Plan, herd.FieldErrors)
	// Arms sets p's arms (and a target file's trigger) as the kind takes them.
	Arms(p Plan, g Given) (Plan, herd.FieldErrors)
	// Problems are bad's, placed where the kind's own file said them.
	Problems(p Plan, g Given, bad herd.FieldErrors) herd.FieldErrors
	// Describe is what the plan is checked and dry-run against: the
	// target and its subject, contacting neither.
	Describe() (*targets.Target, Subject)
	// Hosts refuses a host the run would touch and may not: the end
	// probe's, the target's own.
	Hosts(p Plan, g Given) error
	// Local names what of it listens on this machine's loopback, which a
	// worker on another machine cannot reach; "" when nothing does.
	Local() string
	// Open opens it once past the dry run; Opened.Close closes, or stops,
	// what it opened.
	Open(ctx context.Context, p Plan, g Given) (Opened, error)
}

// Given is what the user gave a run, as a Kind reads it: the command line
// and a scenario file, in the plan's terms.
type Given struct {
	Plan     Plan // the defaults, then a scenario file, then the flags
	Defaults Plan // the defaults alone: a replaced value is checked on them
	// ReadPlan reads value as the plan's flag of that name reads it
	ReadPlan func(p Plan, flag, value string) (Plan, error)
	// PlanSet and TriggerSet are the plan's and the trigger's flags given,
	// on the command line or in a scenario file; Set says whether the
	// user gave a field
	PlanSet, TriggerSet map[string]bool
	Set                 func(field string) bool
	// StartSet and KnobsSet are the bundled testbed's start-up flags and
	// its replicas' knobs given, which only it takes
	StartSet []string
	KnobsSet map[string]bool
	// Arms are --arms' names, given when ArmsSet; Scenario the scenario
	// file at ScenarioPath, nil without one
	Arms         []string
	ArmsSet      bool
	Scenario     *scenario.File
	ScenarioPath string
	// Base is the settings every written arm sends (the knobs the flags
	// give), nil when they have problems (told once, not with every arm);
	// SetKnob sets one of an arm's own knobs from a scenario file's value
	Base    herd.Settings
	SetKnob arm.KnobSetter
	Abort   []string  // --abort-on
	Allow   []string  // --allow-host
	Log     io.Writer // where a kind says what it does as it opens
	// Confirm asks the user before a run sends to tg's hosts that are not
	// loopback, and refuses when not confirmed
	Confirm func(tg *targets.Target) error
}

// Opened is a kind opened for a run.
type Opened struct {
	Target  *targets.Target
	Subject Subject
	// Harness is where the kind's Prometheus scrapes the harness's live
	// metrics, and Prometheus that Prometheus; "" when it has none
	Harness, Prometheus string
	Close               func() // never nil
}

// A subject may be asked for more than the Subject's methods: each of these
// is asked for, never assumed, and a subject without one has no such
// figures (WriteObserver, writes.go, is the third).

// ServerCounter is a subject whose servers keep counters herdbench reads
// every row: the loads and pools behind the loop's figures (loop.go) and
// each layer's count on a call chain.
type ServerCounter interface {
	Servers(ctx context.Context) (observe.Servers, error)
}

// Tiered is a subject with a tier in front of its replicas (the
// testbed's edges), whose policy and counters an arm's results carry
// beside each layer's count (layers.*).
type Tiered interface {
	// Tier is the tier's policy and counters; nil without a tier
	Tier(ctx context.Context) (*result.EdgeTier, error)
	// Layer is the layer behind the tier, from the service's counters:
	// the requests it answered and the database attempts it made.
	Layer(api result.Counters) (requests, dbAttempts int64)
}

// Loader is a subject whose counters say how many loads it completed in
// the database: a drain waits until the database has counted them.
type Loader interface {
	Loads(c result.Counters) int64
}

// Applied is an arm as a subject applied it.
type Applied struct {
	arm.Arm
	// Config is what the subject runs in the arm, as a JSON object the
	// results carry as it is: the testbed's replicas' config, the one
	// they were started with with what the arm sets; nil on a service
	Config json.RawMessage
	// Bound is the longest one load may take inside the service: the
	// testbed replicas' db-timeout times their db_retry's attempts, and
	// its waits; 0 on a service, whose own timeouts herdbench cannot read
	Bound time.Duration
	// After undoes what Apply did; it never is nil
	After func(context.Context) error
}

// ErrStillRunning is wrapped by a drain that gave up while the service
// still ran the arm's work.
var ErrStillRunning = errors.New("still running")

// Configured is a subject whose own config the results carry as the run
// found it (environment.replica_config): what every arm's settings are
// set over.
type Configured interface {
	Config(ctx context.Context) (json.RawMessage, error)
}

// RequesterFor builds the target's request for a key with the arm's
// headers and query values.
func RequesterFor(tg *targets.Target, arm arm.Arm) triggers.Requester {
	return func(ctx context.Context, base, key string) (*http.Request, error) {
		req, err := tg.NewRequest(ctx, base, key)
		if err != nil || arm.Select == nil {
			return req, err
		}
		for k, v := range arm.Select.Headers {
			req.Header.Set(k, v)
		}
		if len(arm.Select.Query) > 0 {
			q := req.URL.Query()
			for k, v := range arm.Select.Query {
				q.Set(k, v)
			}
			req.URL.RawQuery = q.Encode()
		}
		return req, nil
	}
}

// EndpointsFor are where an arm's load goes: its own endpoints, when its
// target file gives it some, else the target's.
func EndpointsFor(tg *targets.Target, a arm.Arm) []string {
	if s := a.Select; s != nil && len(s.Endpoints) > 0 {
		return s.Endpoints
	}
	return tg.Endpoints
}

// LBFor is the load balancer's backend whose counters are an arm's lb.*:
// its own, when its target file names one, else the target's; nil
// without a load balancer.
func LBFor(tg *targets.Target, a arm.Arm) *observe.HAProxy {
	if s := a.Select; s != nil {
		return tg.LB(s.Backend)
	}
	return tg.LB("")
}

// TriggerEnv is what the trigger may touch of tg in arm: its caches,
// connections, proxies and requests, with the arm's selection applied.
func TriggerEnv(tg *targets.Target, arm arm.Arm, hot []string, seed uint64, resultsDir string) triggers.Env {
	env := triggers.Env{Caches: tg.Caches(), Conns: tg.Conns(), Toxiproxy: tg.Toxiproxy, Proxies: tg.Proxies, Likes: tg.Grants.Likes,
		HotKeys: hot, API: EndpointsFor(tg, arm), Request: RequesterFor(tg, arm), Restarter: tg.Grants.Restarter, LB: LBFor(tg, arm),
		Arm: arm.Name, Seed: seed, ResultsDir: resultsDir}
	if s := arm.Select; s != nil {
		// the arm's selection goes with the caches' invalidations: a cache
		// that keys its entries by the arm's header purges the arm's own
		for _, c := range env.Caches {
			if sc, ok := c.(triggers.Selective); ok {
				sc.Select(s.Headers, s.Query)
			}
		}
	}
	return env
}
