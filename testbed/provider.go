package testbed

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
)

// Provider runs the testbed one way: testbed/local as processes on
// loopback, testbed/compose with docker compose. A Registry picks one by
// name; Registry.Ensure is how every command gets a testbed.
type Provider interface {
	// Name is what Options.Provider and Status.Provider call it.
	Name() string
	// Available is nil when the provider can start o here, else why not
	// (its programs are missing): Auto then tries the next one.
	Available(ctx context.Context, o Options) error
	// Problems are the options of o the provider cannot honour, each a
	// herd.FieldError naming the option (o.Set says which were chosen).
	Problems(o Options) herd.FieldErrors
	// Items is how many items Up(o) seeds: item ids 1..Items.
	Items(o Options) int
	// Up starts a testbed in o.StateDir as o asks and returns once every
	// part answers, or stops what it started and says which part failed.
	// It returns how to stop it: the caller owns it unless o.Detach, and
	// then stop is nil (Down stops it).
	Up(ctx context.Context, o Options) (st Status, stop func(context.Context) error, err error)
	// Recorded reports whether dir holds this provider's state file, the
	// testbed running or not.
	Recorded(dir string) bool
	// Status is the testbed running in dir, or an error wrapping
	// ErrNotRunning when none is.
	Status(ctx context.Context, dir string) (Status, error)
	// Down stops the testbed recorded in dir and removes its data, within
	// about timeout, and says for people what it removed and kept; an
	// error wrapping ErrNotRunning when none is recorded.
	Down(ctx context.Context, dir string, timeout time.Duration) (string, error)
	// Restarter restarts the parts of the testbed st describes.
	Restarter(st Status) Restarter
}

// Restarter restarts a part of the testbed in place (triggers.Restarter);
// both providers' also Kill (triggers.Killer).
type Restarter interface {
	Restart(ctx context.Context, part string, rolling bool) ([]string, error)
}

// ErrNotRunning is wrapped by every provider's Status and Down when the
// state directory holds no testbed of theirs.
var ErrNotRunning = errors.New("no testbed is running")

// Auto is the Options.Provider that picks the first registered provider
// that is Available.
const Auto = "auto"

// Tier counts Options.Tiers accepts: the API replicas alone, or edge
// replicas in front of them.
const (
	OneTier  = 1
	TwoTiers = 2
)

// Options say which testbed to use or start. Zero values take the
// provider's defaults.
type Options struct {
	StateDir string // required: data, state file and logs
	Provider string // a registered name, or Auto (the default)
	Replicas int    // API replicas, 1 to 64
	Items    int    // rows seeded into the items table
	Tiers    int    // OneTier, or TwoTiers: edge replicas in front
	Replica  replica.Options
	Edge     edge.Config // with TwoTiers, the edges' start-up policy
	// Observability also runs Prometheus and the exporters; Grafana too
	// where the provider runs one.
	Observability, Grafana bool
	ComposeFile            string        // the docker provider's compose file
	ReadyTimeout           time.Duration // deadline for every part to answer
	Binary                 string        // herdbench executable the local provider runs; default this one
	// Detach leaves the testbed running after the caller exits (testbed
	// up); otherwise the caller owns what Ensure starts and stops it.
	Detach bool
	// Keys, when more than 0, is the key space the caller will ask for:
	// Ensure refuses a testbed seeded with fewer items.
	Keys int
	// Set names the options the caller chose rather than took by default,
	// as testbed up's flags name them with underscores (replicas, items,
	// tiers, db_pool, ttl, edge_timeout, ...): a provider refuses those it
	// cannot honour, and Ensure says which a running testbed lacks.
	Set []string
	// Log is where Ensure and the providers tell people what they do (the
	// provider chosen, starting, compose's builds); nil discards.
	Log io.Writer
	// Events is where a supervisor in this process logs (slog text: each
	// part ready, unexpected exits); nil discards.
	Events io.Writer
}

// IsSet reports whether the caller chose option name.
func (o Options) IsSet(name string) bool { return slices.Contains(o.Set, name) }

// EdgeOptions are the options that set the edge tier's policy.
var EdgeOptions = []string{"edge_timeout", "edge_retry", "edge_retry_budget", "edge_breaker", "edge_bulkhead", "edge_deadline"}

// Problems are every problem of o that holds whichever provider runs it,
// each naming its option.
func (o Options) Problems() herd.FieldErrors {
	var bad herd.FieldErrors
	if o.StateDir == "" {
		bad.Add("state_dir", "empty (accepted: a directory)")
	}
	// zero is the default, unless the caller chose it
	if (o.Replicas != 0 || o.IsSet("replicas")) && (o.Replicas < 1 || o.Replicas > 64) {
		bad.Add("replicas", "%d out of range (accepted: 1 to 64)", o.Replicas)
	}
	if (o.Items != 0 || o.IsSet("items")) && o.Items < 1 {
		bad.Add("items", "%d out of range (accepted: 1 or more)", o.Items)
	}
	if (o.Tiers != 0 || o.IsSet("tiers")) && o.Tiers != OneTier && o.Tiers != TwoTiers {
		bad.Add("tiers", "%d out of range (accepted: 1, the API replicas; 2, edge replicas in front of them)", o.Tiers)
	}
	// the replicas' own: their config, pools, timeouts and stores, as
	// they would refuse them once started (a dry run previews this)
	bad = append(bad, o.Replica.Problems()...)
	edgeCfg := o.Edge
	if edgeCfg.Timeout == 0 && !o.IsSet("edge_timeout") {
		edgeCfg.Timeout = herd.Duration(edge.DefaultTimeout)
	}
	for _, p := range edgeCfg.Problems() {
		c := *p
		c.Field = "edge_" + p.Field
		bad = append(bad, &c)
	}
	if o.Tiers != TwoTiers {
		for _, name := range EdgeOptions {
			if o.IsSet(name) {
				bad.Add(name, "sets the edge tier's policy, and there is none with --tiers 1 (accepted with --tiers 2)")
			}
		}
	}
	return bad
}

// Mismatch is an option the caller chose that the running testbed Ensure
// found does not have: it was ignored.
type Mismatch struct {
	Option string // as in Options.Set
	Asked  string // what the caller asked for
	Has    string // what the running testbed has
}

// Running is the testbed Ensure found or started.
type Running struct {
	Status   Status
	Provider Provider
	// Started says Ensure started it; else it was running already, and
	// Ignored lists what the caller asked for that it does not have.
	Started bool
	Ignored []Mismatch
	stop    func(context.Context) error
}

// Owned reports whether Stop stops it: Ensure started it, not detached.
func (r *Running) Owned() bool { return r.stop != nil }

// Stop stops the testbed if this process owns it (see Owned); else it
// does nothing. It is safe to call more than once.
func (r *Running) Stop(ctx context.Context) error {
	stop := r.stop
	r.stop = nil
	if stop == nil {
		return nil
	}
	return stop(ctx)
}

// Restarter restarts the parts of the running testbed.
func (r *Running) Restarter() Restarter { return r.Provider.Restarter(r.Status) }
