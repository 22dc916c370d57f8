package herd

// The testbed's parts: what a restart can name.
const (
	API      = "api"      // the API replicas
	Redis    = "redis"    // the cache
	Postgres = "postgres" // the database
)

// Parts are the parts of the testbed a restart can name, in the order help
// text and errors list them.
var Parts = []string{API, Redis, Postgres}

// Dependencies are the parts the replicas reach through a proxy, which
// faults can break.
var Dependencies = []string{Postgres, Redis}
