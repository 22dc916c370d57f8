package herd

import (
	"regexp"
	"slices"
	"strings"
)

// The testbed's parts: what a restart can name.
const (
	API       = "api"       // the API replicas
	Redis     = "redis"     // the cache
	Postgres  = "postgres"  // the database
	Memcached = "memcached" // the replicas' item cache, when it is Memcached (testbed up --cache memcached)
	MariaDB   = "mariadb"   // the database, when it is MariaDB (testbed up --db mariadb)
)

// Parts are the parts of the testbed a restart can name, in the order help
// text and errors list them. A testbed runs memcached only when it is the
// replicas' item cache, and mariadb instead of postgres when it is their
// database; restarting a part it does not run is refused.
var Parts = []string{API, Redis, Postgres, Memcached, MariaDB}

// Dependencies are the parts the replicas reach through a proxy, which
// faults can break, by their role: redis is the cache and postgres the
// database, whatever serves them (a Memcached testbed's or target's redis
// is its Memcached; a MariaDB testbed's postgres is its MariaDB, and a
// target's may be its MySQL).
var Dependencies = []string{Postgres, Redis}

// OneReplica is how a restart names one API replica, by its number from
// 1: api-2; the accepted lists show it as ReplicaForm.
var OneReplica = regexp.MustCompile(`^api-[1-9][0-9]*$`)

// SomeReplicas is how a restart names several API replicas: a list of
// them, api-1,api-3, restarted together (or one after another, rolling).
var SomeReplicas = regexp.MustCompile(`^api-[1-9][0-9]*(,api-[1-9][0-9]*)+$`)

// ReplicaForm is one replica's part as help and errors list it, and a list
// of them.
const ReplicaForm = "api-N or a list such as api-1,api-3"

// PartPattern is every part a restart can name, as a regular expression:
// the schema's for the restart option.
const PartPattern = `^(api|redis|postgres|memcached|mariadb|api-[1-9][0-9]*(,api-[1-9][0-9]*)*)$`

// IsPart says whether p names a part a restart can name: one of Parts, one
// replica (api-2), or a list of replicas each named once (api-1,api-3).
func IsPart(p string) bool {
	if slices.Contains(Parts, p) || OneReplica.MatchString(p) {
		return true
	}
	names := strings.Split(p, ",")
	slices.Sort(names)
	return SomeReplicas.MatchString(p) && len(slices.Compact(names)) == len(strings.Split(p, ","))
}

// PartNames are the processes part names: itself, or each replica of a
// list.
func PartNames(part string) []string { return strings.Split(part, ",") }

// InPart says whether the process named name is one part restarts: the
// part itself, every replica for api, or one of a list's replicas.
func InPart(part, name string) bool {
	return slices.Contains(PartNames(part), name) || (part == API && strings.HasPrefix(name, API+"-"))
}
