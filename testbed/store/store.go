// Package store says, once per kind of store the testbed runs (Redis,
// Memcached, Postgres, MariaDB: one file each), everything the testbed
// needs of it: its name and role, how the local provider finds, starts,
// probes and seeds it, its compose profile and service, where the status
// names it, what the replicas are told of it, and how the harness opens,
// describes, observes and empties it as a target. The local provider, the
// compose provider, the registry and the testbed's subject ask a Store;
// none of them names one.
//
// Guarantees: Kinds lists every store once, by a name that is at once its
// --cache or --db value (replica.Caches, replica.DBs), its part and dependency's
// server (herd.Parts), its process, log, version, data directory and
// proxy name, and its compose service; each Role's first store is its
// default, the one a testbed runs when the options name none; Redis runs
// beside every cache (the write queue's stream). A test holds this.
package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/stores/mysql"
	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/stores/redis"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/triggers"
)

// Names every testbed creates in its database.
const (
	Database  = "herdbench"     // the database holding the items table
	Superuser = "herdbench"     // owner; reads pg_stat_statements
	AppRole   = "herdbench_app" // the replicas' role; its connections are the app's
)

// Role is what a store is to the replicas, and the testbed up flag that
// picks it.
type Role string

// The roles.
const (
	Cache Role = "cache" // the items' cache, in front of the database: --cache
	DB    Role = "db"    // the items' database: --db
)

// Noun is the role for people: "cache" or "database".
func (r Role) Noun() string {
	if r == DB {
		return "database"
	}
	return string(r)
}

// Dependency is the dependency (herd.Dependencies) a fault on this role
// breaks, whichever store serves it: the cache's is redis, the database's
// postgres, as in a target file.
func (r Role) Dependency() string {
	if r == DB {
		return herd.Postgres
	}
	return herd.Redis
}

// Addrs are where the harness reaches each store of a testbed, directly
// (not proxied): a part of testbed.Status, whose JSON it is. A store's
// field is empty when the testbed does not run it.
type Addrs struct {
	Redis     string `json:"redis"`               // redis://host:port
	Memcached string `json:"memcached,omitempty"` // host:port, when the replicas' item cache is Memcached
	Postgres  string `json:"postgres"`            // superuser DSN; reads pg_stat_statements
	MariaDB   string `json:"mariadb,omitempty"`   // root's DSN (the Go MySQL driver's), when the replicas' database is MariaDB; reads performance_schema
}

// Store is one kind of store the testbed runs.
type Store interface {
	// Name is its kind's name everywhere (see the package doc).
	Name() string
	// Title is its name for people: "Redis".
	Title() string
	Role() Role
	// Addr is its field of a status' Addrs.
	Addr(a *Addrs) *string
	// Replica points a replica's options at it, through the proxy at
	// proxied (host:port).
	Replica(o *replica.Options, proxied string)
	// Flags are testbed serve's flags that give a replica its address
	// from o: none when o has none.
	Flags(o replica.Options) []string
	// Version asks the store at addr (its status address) its version.
	Version(ctx context.Context, addr string) (string, error)
	Local
	Composed
	Observed
}

// Composed is how docker-compose.yml runs a store.
type Composed interface {
	Compose() Compose
}

// Compose is a store's part of docker-compose.yml: its service (the
// store's name) serves on Port inside the compose network, where
// toxiproxy listens on the same port for it (testbed/compose/toxiproxy.json);
// Profile is the profile that runs it (none: it always runs), Env what
// points the replicas at it (none: the compose file's default).
type Compose struct {
	Port    int
	Profile string
	Env     []string
	// Published is its status address from the host:port the service's
	// port is published on.
	Published func(hostport string) string
}

// Proxy is the replicas' address of the store inside the compose network:
// toxiproxy's proxy in front of it.
func (c Compose) Proxy() string { return fmt.Sprintf("toxiproxy:%d", c.Port) }

// Observed is how the harness uses a store of the testbed as a target.
// It speaks its own types, which the subject copies into its
// targets.Target (this package may not import targets: the local
// provider, which tests of the engine's own packages start, imports it).
type Observed interface {
	// Describe says what the testbed's target has of it, without
	// connecting: its keys or statements, the caps it grants and the
	// server a fault on its role's dependency breaks (by proxies, the
	// status' proxies).
	Describe(d *Description, proxies map[string]string)
	// Open connects its handle in h at addr, its status address.
	Open(ctx context.Context, h *Handles, addr string) error
}

// Description is what the testbed's target says of its stores: the
// fields of targets.Target of the same names, and its Granted caps.
type Description struct {
	RedisKey, Pattern, Channel string // the items in Redis, by key, pattern and invalidation channel
	OwnedItems                 string // the items' key in a cache only the testbed owns
	Statements                 observe.Statements
	Role                       string
	Proxies                    map[string]string // dependency -> the proxy a fault on it breaks
	Caps                       *triggers.Caps
}

// Handles are the testbed target's connections to its stores: the
// fields of targets.Target of the same names.
type Handles struct {
	Redis *redis.Client
	DB    *postgres.DB
	MySQL *mysql.DB
	// OpenMemcached opens the target's Memcached client and stats reader
	// (targets.Target.OpenMemcached).
	OpenMemcached func(ctx context.Context, addr string) error
	// Program is the harness' name on its connections (targets.ProgramName).
	Program string
}

// Flusher is a cache the fill empties before every arm.
type Flusher interface {
	Flush(ctx context.Context, h *Handles, addr string) error
}

// Writable is a database the write herd writes to: its likes table and
// how its write statements are counted.
type Writable interface {
	Likes(h *Handles) triggers.LikesTable
	WriteStatements(ctx context.Context, h *Handles, role string) (calls, rows int64, err error)
}

// Unobserved is a store the observability stack (its exporters and
// dashboards) cannot read: why, and what to do instead.
type Unobserved interface {
	Unobserved() (why, accepted string)
}

// Kinds are every store, caches first, each role's default first: adding
// a store is its file and a line here (and its field of Addrs).
func Kinds() []Store {
	return []Store{Redis{}, Memcached{}, Postgres{}, MariaDB{}}
}

// always is the store every testbed runs, whatever its cache: Redis,
// which keeps the write queue's stream.
var always Store = Redis{}

// Named is the store called name.
func Named(name string) (Store, bool) {
	for _, s := range Kinds() {
		if s.Name() == name {
			return s, true
		}
	}
	return nil, false
}

// Names are the names of role's stores, its default first.
func Names(role Role) []string {
	var out []string
	for _, s := range Kinds() {
		if s.Role() == role {
			out = append(out, s.Name())
		}
	}
	return out
}

// Lookup is role's store named kind; "" is its default.
func Lookup(role Role, kind string) (Store, error) {
	for _, s := range Kinds() {
		if s.Role() == role && (kind == "" || s.Name() == kind) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%s: %q (accepted: %s)", role, kind, strings.Join(Names(role), ", "))
}

// IsDefault says whether s is its role's default.
func IsDefault(s Store) bool {
	d, _ := Lookup(s.Role(), "")
	return d.Name() == s.Name()
}

// Set is the stores a testbed runs: its item cache and its database, and
// always Redis beside them.
type Set struct{ Cache, DB Store }

// For is the set the replicas' options o ask for (their Cache and DB; ""
// the defaults), or an error naming the role and the accepted values.
func For(o replica.Options) (Set, error) {
	c, err := Lookup(Cache, o.Cache)
	if err != nil {
		return Set{}, err
	}
	d, err := Lookup(DB, o.DB)
	return Set{Cache: c, DB: d}, err
}

// MustFor is For of options already checked.
func MustFor(o replica.Options) Set {
	s, err := For(o)
	if err != nil {
		panic("store: " + err.Error())
	}
	return s
}

// In is the set a status' addresses describe: in each role the store
// other than the default whose address is set, else the default.
func In(a Addrs) Set {
	var s Set
	for _, k := range Kinds() {
		if *k.Addr(&a) == "" && !IsDefault(k) {
			continue
		}
		switch {
		case k.Role() == Cache && (s.Cache == nil || IsDefault(s.Cache)):
			s.Cache = k
		case k.Role() == DB && (s.DB == nil || IsDefault(s.DB)):
			s.DB = k
		}
	}
	return s
}

// Running are the stores the set runs, in the order they start and the
// parts list them: Redis, the database, the cache when it is another.
func (s Set) Running() []Store {
	out := []Store{always, s.DB}
	if s.Cache.Name() != always.Name() {
		out = append(out, s.Cache)
	}
	return out
}

// Replaced is the default of a role whose store is another in s, which
// a testbed therefore does not use (Postgres beside MariaDB), unless it
// always runs; nil when none is.
func (s Set) Replaced() []Store {
	var out []Store
	for _, k := range []Store{s.Cache, s.DB} {
		if d, _ := Lookup(k.Role(), ""); d.Name() != k.Name() && d.Name() != always.Name() {
			out = append(out, d)
		}
	}
	return out
}

// Of is the store of s that plays role.
func (s Set) Of(role Role) Store {
	if role == DB {
		return s.DB
	}
	return s.Cache
}

// Runs says whether s runs the store named name.
func (s Set) Runs(name string) bool {
	return slices.ContainsFunc(s.Running(), func(k Store) bool { return k.Name() == name })
}
