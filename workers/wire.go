// Package workers sends one herd from several processes or machines: a
// worker (`herdbench worker`) serves a small HTTP API, takes its stripe of
// an arm's schedule, starts it at the instant it is given on its own clock,
// and returns what it recorded; the controller (`--workers`) splits each
// arm, waits until every worker is ready, and merges what they recorded as
// if one client had sent everything. Kubernetes launches the workers
// (Manifests); herdbench keeps no cluster of its own.
package workers

import (
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// The worker's API, version 1.
const (
	pathClock   = "/v1/clock"   // GET: the worker's clock, for offsets
	pathPrepare = "/v1/prepare" // POST a Share: ready the load, answer Ready
	pathStart   = "/v1/start"   // POST a Start: run it at its instant
	pathResult  = "/v1/result"  // GET ?run=ID: wait for the end, answer Result
)

// Share is one worker's part of an arm: its stripe of the schedule.
type Share struct {
	Run       string            `json:"run"` // names the arm, unique per run
	Version   string            `json:"version"`
	Index     int               `json:"index"`
	Of        int               `json:"of"`
	Reference string            `json:"reference"` // worker 0's URL, whose clock the offsets are against
	Load      load.Config       `json:"load"`      // Stripe and Stripes set, Start not yet
	Space     *targets.KeySpace `json:"space,omitempty"`
	Classes   []targets.Class   `json:"classes,omitempty"` // the target's classes of requests; none: Load.Request alone
	Seed      uint64            `json:"seed"`
	Before    time.Duration     `json:"before"`
	After     time.Duration     `json:"after"`
	Critical  bool              `json:"critical"`
	// Live: the bins keep the live window (the plan has stop conditions)
	Live bool `json:"live,omitempty"`
	// Burst is this worker's share of the burst trigger's clients, released
	// at T on its own clock, asking for HotKeys in turn; 0: none
	Burst   int      `json:"burst,omitempty"`
	HotKeys []string `json:"hot_keys,omitempty"`
	// Hosts the worker may send to beyond loopback (the controller's
	// checked target); the worker's own --allow-host bounds them
	Hosts []string `json:"hosts,omitempty"`
	// Vegeta: write the share's requests as vegeta's results into a file
	// of this worker's own (-o vegeta); nil: none
	Vegeta *VegetaOut `json:"vegeta,omitempty"`
}

// Ready is a worker's answer to a Share: it can start.
type Ready struct {
	Boot    string        `json:"boot"` // this process, so a restarted worker is told apart
	Version string        `json:"version"`
	Offset  time.Duration `json:"offset"` // its clock less worker 0's
	Error   time.Duration `json:"error"`  // the offset's bound: half the best round trip
}

// Start tells a worker when to start the schedule, on its own clock.
type Start struct {
	Run   string    `json:"run"`
	Boot  string    `json:"boot"`
	Start time.Time `json:"start"`
	T     time.Time `json:"t"`
}

// Result is what a worker recorded of its share.
type Result struct {
	Boot  string                   `json:"boot"`
	State experiment.RecorderState `json:"state"`
	// FirstLag is how late its first request left against its due
	// instant, on its own clock
	FirstLag time.Duration `json:"first_lag"`
	Burst    *BurstPart    `json:"burst,omitempty"` // its share of the burst
	Error    string        `json:"error,omitempty"` // the load or the burst failed
}

// BurstPart is the burst one worker released.
type BurstPart struct {
	Clients    int             `json:"clients"`
	OK         int             `json:"ok"`
	Departures []time.Duration `json:"departures"` // each written request's, after the release
}

// clockReading is the worker's answer on pathClock.
type clockReading struct {
	Now time.Time `json:"now"`
}
