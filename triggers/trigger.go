// Package triggers provides the events that provoke a herd, each a small
// type behind one interface, fired at a known instant T. Default returns the
// registry of every trigger; Names lists them for help text and errors.
package triggers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/testbed/api"
)

// Env is what a trigger may touch. What a target does not declare is
// zero, and the triggers that need it say so (Caps, Requires).
type Env struct {
	Redis    *redis.Client
	RedisKey func(key string) string // the Redis key of a request's key; nil when the target declares none
	Pattern  string                  // the only Redis keys a trigger may touch (a Redis glob)
	Owned    bool                    // herdbench started the dependencies: flush may empty the whole database
	Channel  string                  // where broadcast invalidations go

	Toxiproxy *toxiclient.Client // the proxies between the service and its dependencies
	Proxies   map[string]string  // dependency (postgres, redis) -> proxy name

	DB   *pgxpool.Pool // the target's Postgres, to reset Role's connections (conndrop without toxiproxy)
	Role string

	HotKeys   []string  // the keys warmed before the arm, hottest first
	API       []string  // the service's base URLs
	Request   Requester // builds the service's request for a key
	Restarter Restarter // restarts the target's processes; nil when it cannot
	T         time.Time // the planned instant of the trigger
}

// Requester builds the service's request for a key, as the load sends it.
type Requester func(ctx context.Context, base, key string) (*http.Request, error)

// ItemRequest is the testbed's request for a key: GET base/items/key. It
// is what an Env without a Requester sends.
func ItemRequest(ctx context.Context, base, key string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/items/"+key, nil)
}

// Caps is what a target lets triggers do, known before connecting to it.
type Caps struct {
	Redis     bool     // a Redis to read and touch
	RedisKeys bool     // and the Redis key of a request's key, with the pattern of keys that may be touched
	Pattern   bool     // the pattern of keys that may be touched, or a Redis herdbench owns
	Channel   bool     // a channel for broadcast invalidations
	Proxies   []string // dependencies behind toxiproxy
	Role      bool     // a Postgres role whose connections may be reset
	Pause     bool     // a Redis that may be paused whole (CLIENT PAUSE ALL)
	Restart   bool     // processes that can be restarted
	Endpoints bool
}

// Requirer is implemented by triggers that need something of the target.
type Requirer interface {
	Requires(Caps) error
}

// Supported says whether trigger t can run on a target with caps, and
// names what is missing when it cannot.
func Supported(t Trigger, caps Caps) error {
	if r, ok := t.(Requirer); ok {
		if err := r.Requires(caps); err != nil {
			return fmt.Errorf("trigger %s needs %w", t.Name(), err)
		}
	}
	return nil
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
