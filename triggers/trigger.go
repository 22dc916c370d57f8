// Package triggers provides the events that provoke a herd, each a small
// type behind one interface, fired at a known instant T. Default returns the
// registry of every trigger; Names lists them for help text and errors.
package triggers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/testbed/api"
)

// Env is what a trigger may touch.
type Env struct {
	Redis     *redis.Client
	Toxiproxy *toxiclient.Client // the proxies between the replicas and their dependencies
	HotKeys   []int64            // the ids warmed before the arm, hottest first
	API       []string           // the replicas' base URLs
	Restarter Restarter          // restarts the target's processes; nil when it cannot
	T         time.Time          // the planned instant of the trigger
}

// Restarter restarts a part of the target in place.
type Restarter interface {
	Restart(ctx context.Context, part string, rolling bool) ([]string, error)
}

// Detail records what a trigger did, for the arm's results.
type Detail map[string]any

// Trigger provokes a herd at T.
type Trigger interface {
	Name() string
	Describe() string // one line: what happens at T
	Fire(ctx context.Context, env Env) (Detail, error)
}

// WarmConfigurer is implemented by triggers that need the cache warmed with
// a different config, such as TTLs that all end at T. untilT is the time
// from the warm to T.
type WarmConfigurer interface {
	WarmConfig(c api.Config, untilT time.Duration) api.Config
}

// Preparer is implemented by triggers that set something up before the
// load starts and before T is fixed (env.T is zero), such as opening
// connections; what takes long here does not eat into the timeline.
type Preparer interface {
	Prepare(ctx context.Context, env Env) error
}

// Aligner is implemented by triggers that act once T is fixed, before the
// load starts, such as making keys expire exactly at T.
type Aligner interface {
	Align(ctx context.Context, env Env) error
}

// Releaser is implemented by triggers that hold resources from Prepare
// until Fire; Release frees them when Fire never ran.
type Releaser interface {
	Release()
}

// Registry holds triggers by name.
type Registry struct {
	byName map[string]Trigger
	names  []string
}

// NewRegistry returns a registry of ts; a duplicate name panics.
func NewRegistry(ts ...Trigger) *Registry {
	r := &Registry{byName: map[string]Trigger{}}
	for _, t := range ts {
		if _, dup := r.byName[t.Name()]; dup {
			panic("triggers: duplicate name " + t.Name())
		}
		r.byName[t.Name()] = t
		r.names = append(r.names, t.Name())
	}
	return r
}

// Default returns every trigger herdbench has, configured with o (zero
// options take DefaultOptions).
func Default(o Options) *Registry {
	o = o.OrDefaults()
	return NewRegistry(Expire{}, TTL{}, Flush{}, Conndrop{},
		Restart{Part: o.Restart, Rolling: o.Rolling},
		Outage{For: time.Duration(o.Outage), Dependency: o.Dependency},
		SlowDB{Latency: time.Duration(o.SlowDBLatency), For: time.Duration(o.SlowDBFor)},
		&Burst{Clients: o.Burst}, Notify{})
}

// Names lists the registered names in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Get returns the trigger called name, or an error listing the valid names.
func (r *Registry) Get(name string) (Trigger, error) {
	if t, ok := r.byName[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown trigger %q (accepted: %s)", name, strings.Join(r.names, ", "))
}
