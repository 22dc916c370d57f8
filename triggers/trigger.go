// Package triggers provides the events that provoke a herd, each fired at
// a known instant T. Every trigger is one small type in its own file: its
// options are its tagged fields (their defaults set by its constructor),
// and beside them its checks, what it needs of a target, the plan a dry
// run prints and Fire. Default returns the registry of every trigger; the
// command line's flags, the scenario file's trigger keys and the JSON
// Schema's trigger enum are generated from a registry, so adding a trigger
// is one file and one line in Default.
//
// Guarantees: Plan contacts nothing; a trigger touches only what Env gives
// it, which is what the target declares; a fault a trigger makes is undone
// when its time is up or its context ends, whichever comes first.
package triggers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
)

// Trigger provokes a herd at T.
type Trigger interface {
	Name() string
	Describe() string    // one line: what happens at T
	Plan(env Env) string // exactly what it would touch, for a dry run; contacts nothing
	Fire(ctx context.Context, env Env) (Fired, error)
	// Detail is a new, empty detail of the trigger's type (a pointer to
	// it): what Fire returns in Fired.Detail, and what a results file's
	// trigger.detail is read into
	Detail() any
}

// Fired is what a trigger did at T.
type Fired struct {
	Detail any          // the trigger's own typed detail, a pointer (Trigger.Detail): the results' trigger.detail
	Burst  *BurstResult // requests the trigger released at T, and how far apart they left
	// Ended is when the trigger's cause was over: the keys gone (expire,
	// flush, notify, ttl), the connections reset (conndrop), the fault
	// removed (outage, slowdb), every restarted part serving again
	// (restart), the burst's last request answered (burst, writes)
	Ended time.Time
	// Warnings are what the trigger did not do as planned, for the arm's
	// warnings (ttl: hot keys the cache no longer held at the load's start)
	Warnings []string
}

// Env is what a trigger may touch. What a target does not declare is
// zero, and the triggers that need it say so (Caps, Requires).
type Env struct {
	// Caches are the service's caches a trigger may touch, in the order
	// the triggers act on them: its Redis or its Memcached, then an HTTP
	// cache in front of it; what only some can do (a broadcast, a pause)
	// is an optional interface of theirs
	Caches []Cache
	Conns  ConnKiller // the service's database, whose connections conndrop ends without toxiproxy; nil: none

	Toxiproxy *toxiclient.Client // the proxies between the service and its dependencies
	Proxies   map[string]string  // dependency (postgres, redis) -> proxy name

	Likes LikesTable // the testbed's likes and feed, in Postgres or MariaDB (writes)

	HotKeys   []string         // the keys warmed before the arm, hottest first
	API       []string         // the service's base URLs
	Request   Requester        // builds the service's request for a key
	LB        *observe.HAProxy // the load balancer in front of the target (haproxy:); nil without
	Restarter Restarter        // restarts the target's processes; nil when it cannot
	T         time.Time        // the planned instant of the trigger

	Arm        string // the arm's name
	Seed       uint64 // the run's seed
	ResultsDir string // the run's results directory; "" when the run writes none
}

// Requester builds the service's request for a key, as the load sends it.
type Requester func(ctx context.Context, base, key string) (*http.Request, error)

// ItemRequest is the testbed's request for a key: GET base/items/key. It
// is what an Env without a Requester sends.
func ItemRequest(ctx context.Context, base, key string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/items/"+key, nil)
}

// Restarter restarts a part of the target in place and returns the
// processes it restarted.
type Restarter interface {
	Restart(ctx context.Context, part string, rolling bool) ([]string, error)
}

// Killer is a Restarter that can also restart a part without a graceful
// stop (SIGKILL), as a crash does: what its processes held is lost.
type Killer interface {
	Kill(ctx context.Context, part string) ([]string, error)
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
	Parts     []string // the parts a restart may name (herd.Parts the testbed runs); nil: not known before the run
	Endpoints bool
	Writes    bool // the testbed's write endpoint and likes table
	HTTPPurge bool // an HTTP cache that invalidates one key (http_cache.purge)
	HTTPFlush bool // and the whole cache (http_cache.flush)
	Memcached bool // a Memcached (memcached.address)
	// MemcachedKeys: and the item of a request's key (memcached.key)
	MemcachedKeys bool
	FlushAll      bool // a Memcached that may be emptied whole (memcached.allow_flush_all)
	FlushDB       bool // a Redis that may be emptied whole (FLUSHDB): the testbed's, which herdbench started
	MySQLUser     bool // a MySQL user whose connections may be killed (mysql.user)
	// At is where a target file declares field ("file:line: field"), for
	// what a trigger needs of it; nil: the field alone
	At func(field string) string
}

// at is where field is declared, as At says.
func (c Caps) at(field string) string {
	if c.At == nil {
		return field
	}
	return c.At(field)
}

// The optional capabilities of a trigger, each a small interface checked
// where it is used.
type (
	// Requirer is implemented by triggers that need something of the
	// target; the error names it and where a target file declares it.
	Requirer interface {
		Requires(Caps) error
	}
	// Preparer is implemented by triggers that set something up before the
	// load starts and before T is fixed (env.T is zero), such as opening
	// connections: what takes long here does not eat into the timeline.
	// What it returns fires at T in the trigger's place.
	Preparer interface {
		Prepare(ctx context.Context, env Env) (Armed, error)
	}
	// Aligner is implemented by triggers that make keys end at T: the warm
	// gives the hot keys WarmTTL, and Align, once T is fixed and before the
	// load starts, sets their expiry exactly.
	Aligner interface {
		WarmTTL(untilT time.Duration) time.Duration
		Align(ctx context.Context, env Env) error
	}
	// Lasting is implemented by faults that last a while, or begin a
	// while after T; option is the option that says how long (or when),
	// so a plan can refuse one that outlasts its arm, or that it ends
	// before; "" when this one does neither.
	Lasting interface {
		Lasts() (option string, d time.Duration)
	}
	// Sender is implemented by triggers that send requests of their own at
	// T, for a target's rate cap and the dry run's worst case.
	Sender interface {
		Sends() int
	}
	// Settler is implemented by triggers whose outcome is known only once
	// the service settled after the arm (writes it acknowledged and must
	// still apply): after the drain, Settle completes the detail Fire
	// returned; steadyOK is how many of the trigger's steady requests
	// (Workload) the service answered 2xx.
	Settler interface {
		Settle(ctx context.Context, env Env, detail any, steadyOK int64) any
	}
	// Workload is implemented by triggers that send steady requests of their
	// own through the whole load, beside the reads (the writes trigger's
	// likes): the generator sends them on their own schedule from the
	// load's start, with the reads' intended-time accounting, never
	// retried (a write is not idempotent), and counts them apart.
	Workload interface {
		Steady(env Env) Steady
	}
	// Splitter is implemented by triggers whose burst of clients the
	// generator's workers release at T, each a share (the burst trigger):
	// BurstClients is how many there are in all.
	Splitter interface {
		BurstClients() int
	}
	// Writer is implemented by triggers that provoke a write herd: the arm
	// reads what the testbed's write statements and write queue did around
	// it, and files it in arms[].writes.
	Writer interface {
		WriteHerd()
	}
	// Gater is implemented by triggers that bring gates of their own,
	// checked on every arm unless the plan gates the same figure.
	Gater interface {
		DefaultGates() []string
	}
)

// More optional capabilities, of a trigger or of what it armed.
type (
	// Chosen is implemented by triggers with options that a plan must
	// set when it chooses the trigger, and may set only then (command's
	// run): chosen says whether the plan's trigger is this one.
	Chosen interface {
		CheckChosen(chosen bool) herd.FieldErrors
	}
	// Undoer is implemented by an Armed trigger with an undo of its own
	// (command's): after the arm, on every path (it ended, failed, or was
	// interrupted), Undo runs it once if Fire started, records how it went
	// in the detail Fire returned, and fails when it failed.
	Undoer interface {
		Undo(ctx context.Context) error
	}
)

// Steady is a trigger's steady load: Rate requests per second (0: none),
// each Method on Path with {key} replaced by one of Keys, drawn uniformly.
type Steady struct {
	Rate         int
	Method, Path string
	Keys         []string
}

// Armed is a prepared trigger: Fire fires it at T, Close frees what
// Prepare held when Fire never ran.
type Armed interface {
	Fire(ctx context.Context, env Env) (Fired, error)
	Close()
}

// Supported says whether trigger t can run on a target with caps, and
// names what is missing when it cannot: an *Unsupported.
func Supported(t Trigger, caps Caps) error {
	if r, ok := t.(Requirer); ok {
		if err := r.Requires(caps); err != nil {
			return &Unsupported{Trigger: t.Name(), Needs: err}
		}
	}
	return nil
}

// Unsupported is a trigger a target lacks what it needs for.
type Unsupported struct {
	Trigger string
	Needs   error // what it needs, and where a target file declares it
}

func (u *Unsupported) Error() string { return fmt.Sprintf("trigger %s needs %v", u.Trigger, u.Needs) }
func (u *Unsupported) Unwrap() error { return u.Needs }

// OptionNeeds is what a trigger needs of the target for the value of
// one of its options (restart's part, api-9 on a testbed of three
// replicas): the option's value is to blame, not the trigger.
type OptionNeeds struct {
	Option string // its key: restart, write_restart
	Err    error
}

func (e *OptionNeeds) Error() string { return e.Err.Error() }
func (e *OptionNeeds) Unwrap() error { return e.Err }

// wait returns after d or when ctx ends.
func wait(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d): // unstopped, it is collected all the same (Go 1.23)
	}
}

// list names up to ten items, then how many more.
func list(items []string) string {
	if len(items) <= 10 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:10], ", ") + fmt.Sprintf(", ... and %d more", len(items)-10)
}
