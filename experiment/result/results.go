package result

import (
	"encoding/json"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Schema names the results format; it changes when a field changes meaning.
// v2: the verdict tells a stuck arm (metastable) from one still on its way
// back (recovering, which replaced degraded), and says how deep (depth)
// and which way (trend) it was at its end.
const Schema = "herdbench.results/v2"

// SchemaV1 is the format before v2: its files read back with their own
// verdict words (degraded among them), judged by v1's rule.
const SchemaV1 = "herdbench.results/v1"

// ArmResult is one arm's figures. Windows: db.queries, cache.* and http.*
// count from T to the end of the arm; db.queries_total and api.* from the
// start of the load to the end; warm is the cache fill before the load.
type ArmResult struct {
	Name    string          `json:"name"`
	Config  json.RawMessage `json:"config,omitempty"` // what the arm ran on, as its subject says it: the testbed's replicas' strategy and every knob
	Select  *arm.Select     `json:"select,omitempty"` // how the arm was chosen on a service herdbench does not control
	Clients arm.Clients     `json:"clients"`          // what every client did: retries, throttling, hedging, breaker
	T       time.Time       `json:"t"`
	Warm    Warm            `json:"warm"`
	Timing  Timing          `json:"timing"` // the arm's overhead beside its load windows
	Trigger TriggerResult   `json:"trigger"`
	DB      *DB             `json:"db"`    // null: the target declares no Postgres
	Cache   *Cache          `json:"cache"` // null: the target declares no Redis
	HTTP    HTTP            `json:"http"`
	// Requests are each request class's own figures (classes.go), by its
	// name; absent for a target of one request
	Requests map[string]*RequestFigures `json:"requests,omitempty"`
	Load     LoadFigures                `json:"load"`              // whether the generator kept its schedule
	Workers  *Workers                   `json:"workers,omitempty"` // the workers that sent the load (--workers)
	API      Counters                   `json:"api"`               // null: not the testbed, whose replicas count
	Edge     *EdgeTier                  `json:"edge,omitempty"`    // the edge replicas of a two-tier testbed
	Layers   *Layers                    `json:"layers,omitempty"`  // a two-tier testbed: how requests multiplied, layer by layer
	LB       *LoadBalancer              `json:"lb,omitempty"`      // the load balancer in front of the service (a target's haproxy:), by its own counters
	Retries  Retries                    `json:"retries"`
	Burst    *triggers.BurstResult      `json:"burst,omitempty"`  // the release spread of the burst trigger's clients, or of the writes trigger's burst
	Writes   *WriteFigures              `json:"writes,omitempty"` // the writes trigger's: what the write herd cost
	Windows  *Windows                   `json:"windows"`          // before, during and after the trigger: offered, attempts and goodput per second (windows.go)
	// Verdict is recovered, relapsed, recovering, metastable or overloaded
	// (verdict.go; docs/stampede.md, "The verdict"); degraded in a v1 file
	Verdict string `json:"verdict"`
	// Depth is the goodput of the arm's last hold as a share of the
	// before window's; null without a baseline goodput or a hold from T
	Depth *float64 `json:"depth,omitempty"`
	// Trend is the rise of the goodput fitted over the arm's last
	// TrendSpan, as a share of the before window's; null without a
	// baseline goodput or a whole span after the trigger's end
	Trend *float64 `json:"trend,omitempty"`
	// SettleMS is how long after the trigger's end the arm could first be
	// judged metastable: the longest timeout on its path (settleOf)
	SettleMS *int64 `json:"settle_ms,omitempty"`
	// Loop is the after window's figures beside the before window's, and
	// on a metastable arm the one furthest from its baseline (loop.go)
	Loop *Loop `json:"loop,omitempty"`
	// Escape is what stepping the load down found once the arm was
	// metastable (--escape, escape.go); absent without --escape
	Escape *EscapeResult `json:"escape,omitempty"`
	// RecoveryMS is when the arm was back within its band, from the
	// trigger's end (trigger.ended_ms); RecoveryFromTMS the same instant
	// from T; null: not recovered
	RecoveryMS      *int64 `json:"recovery_ms"`
	RecoveryFromTMS *int64 `json:"recovery_from_t_ms"`
	// RelapseFromTMS is when the arm, back within its band after the
	// trigger's end, first fell out of it again, from T: the last row of
	// the first hold out of band after one within it; null: it never did
	RelapseFromTMS *int64 `json:"relapse_from_t_ms,omitempty"`
	// Model is what the model expects of the arm's fault, beside the
	// verdict (model.go); absent but on a slowdb run
	Model   *ModelExpectation `json:"model,omitempty"`
	Aborted *Abort            `json:"aborted"` // null: the arm ran to its end
	// Warnings are what could not be read after the arm was measured (the
	// target's Prometheus, the replicas' counters): the figures above stand
	Warnings []string `json:"warnings,omitempty"`
	// MissedSamples are 100 ms samples that failed (Postgres or Redis down on
	// purpose): their rows take the rate of the interval spanning them
	MissedSamples int   `json:"missed_samples"`
	Timeline      []Row `json:"timeline"`
	// Prometheus are the target's own series (prometheus: in its target
	// file) over the timeline, each summed over its labels, t_ms from T
	Prometheus map[string][]targets.Point `json:"prometheus,omitempty"`
	// Runs are every run of an arm the plan repeats (plan.repeat), in run
	// order, each as one run's results; the figures above are then their
	// medians and Spread each figure's least and greatest (repeat.go).
	// Representative marks the run whose timeline, trigger detail and
	// other words the arm shows: the closest to the medians
	Runs           []ArmResult `json:"runs,omitempty"`
	Spread         []Spread    `json:"spread,omitempty"`
	Representative bool        `json:"representative,omitempty"`

	BaselineP99 float64                   `json:"-"` // the before window's p99, for judge
	RowHists    []*hdrhistogram.Histogram `json:"-"` // each timeline row's latencies (a copy), for judge; nil when read from a file
}

// Abort says when and why an arm was stopped early by a stop condition.
type Abort struct {
	AtMS   int64  `json:"at_ms"`  // relative to T; negative before it
	Gate   string `json:"gate"`   // the condition that held, as written
	Reason string `json:"reason"` // the condition with the value it measured
}

// DrainWaits is what a target's drain waited on: for each source the
// target declares, how long from the drain's start until it read idle
// and stayed so (or the whole drain, for one still busy when it gave
// up), and the source that held it longest; a source not declared is
// absent.
type DrainWaits struct {
	DBMS         *int64 `json:"db_ms,omitempty"`         // its statements stopped running and completing
	CacheMS      *int64 `json:"cache_ms,omitempty"`      // its commands stopped growing
	LBMS         *int64 `json:"lb_ms,omitempty"`         // HAProxy's queues empty, its backend's sessions at their idle level
	PrometheusMS *int64 `json:"prometheus_ms,omitempty"` // every series of prometheus.drain back at its level
	// What they held: HAProxy's requests queued and its backend's sessions
	// above their idle level at the drain's first reading (the load's
	// end); the cache's commands from that reading to the last
	LBSessions    *int64 `json:"lb_sessions,omitempty"`
	CacheCommands *int64 `json:"cache_commands,omitempty"`
	// HeldBy is the source with the longest wait (db, cache, lb or
	// prometheus; the first of them on a tie)
	HeldBy string `json:"held_by,omitempty"`
}

// Timing is what an arm takes besides its load windows (warmup, before,
// after), so the next regression in a run's length shows.
type Timing struct {
	FillMS  int64 `json:"fill_ms"`  // bringing the service to the arm's start: the fill, resets, snapshots
	DrainMS int64 `json:"drain_ms"` // from the load's end until nothing of the arm runs and the last snapshot is read
	// DrainTimedOut: the service still ran the arm's work when the drain
	// gave up (Subject.Drain's ErrStillRunning); a warning says what ran
	DrainTimedOut bool `json:"drain_timed_out,omitempty"`
	// Drain is what the drain waited on, per source; nil when the
	// subject says none (the testbed's drain waits on its replicas)
	Drain *DrainWaits `json:"drain,omitempty"`
	// AfterMS is how long the load ran after T when the arm ended on its
	// verdict (--after auto, a stop condition on the verdict); absent when
	// it ran its after window whole
	AfterMS *int64 `json:"after_ms,omitempty"`
}

// Warm is the cache fill before the load: on the testbed every key once,
// each one load; on a service, one request for each hot key.
type Warm struct {
	Keys    int   `json:"keys"`
	Queries int64 `json:"queries"` // pg_stat_statements delta of the item query and, on the testbed, of the bulk fill's (api.FillQuery)
	TookMS  int64 `json:"took_ms"`
}

// TriggerResult says what the trigger did and when.
type TriggerResult struct {
	Name    string     `json:"name"`
	FiredAt *time.Time `json:"fired_at"` // null: the arm was stopped before T
	// EndedMS is when the trigger's cause was over, from T (triggers.Fired
	// Ended: the fault removed, the restarted parts serving again, the
	// burst answered); null: it did not fire, or failed, or its burst was
	// the workers' to release (--workers)
	EndedMS *int64 `json:"ended_ms"`
	Detail  any    `json:"detail"` // the trigger's own (triggers.Trigger.Detail): *triggers.ExpireDetail, ...; typed when read back too (detail.go)
}

// DB figures come from pg_stat_statements calls of the item query by the
// app's role, and pg_stat_activity backends of that role; on MySQL or
// MariaDB, from COUNT_STAR of the selected statement digests and
// performance_schema.users of the service's user.
type DB struct {
	Queries      int64 `json:"queries"`       // T to end
	QueriesTotal int64 `json:"queries_total"` // start of the load to end
	// DrainQueries are those of Queries the database counted after the
	// load's end, in the drain (a service still serving clients that had
	// given up); DrainShare is their share of Queries. Both absent (0)
	// when the drain added none.
	DrainQueries    int64   `json:"drain_queries,omitempty"`
	DrainShare      float64 `json:"drain_share,omitempty"`
	PeakQPS         float64 `json:"peak_qps"`         // over 1 s sliding windows
	BaselineQPS     float64 `json:"baseline_qps"`     // mean over the before window
	PeakConnections int64   `json:"peak_connections"` // most backends of the app role at once
	NewConnections  int64   `json:"new_connections"`  // backends started after T (still open when sampled); MySQL: connections the user opened after T
	// AboveBaselineMS is how long from T the database's work stayed above
	// its baseline's, from the timeline's rows (AboveBaseline); null when
	// read from a file without it
	AboveBaselineMS *int64 `json:"above_baseline_ms,omitempty"`
}

// Cache figures are Redis INFO, or Memcached stats, deltas from T to the end.
type Cache struct {
	Hits     int64    `json:"hits"`
	Misses   int64    `json:"misses"`
	HitRatio *float64 `json:"hit_ratio"` // null when there were no reads
	Expired  int64    `json:"expired"`
	// ConnectionsReceived is total_connections_received: reconnects show here
	ConnectionsReceived int64 `json:"connections_received"`
}

// HTTP figures come from the client's results for requests intended at or
// after T; latency counts from each request's intended send time.
type HTTP struct {
	Requests int64 `json:"requests"`
	OK       int64 `json:"ok"`
	Stale    int64 `json:"stale"` // ok, but answered with a stale copy (X-Cache: stale)
	Local    int64 `json:"local"` // ok, answered from a replica's in-process tier: up to local_ttl old
	// Status4xx are the 4xx answers (but a shed status): the service said
	// it has no such thing, or refused the request; neither ok nor a
	// failure, and no drop (a gate or stop condition on it makes it one)
	Status4xx int64   `json:"status_4xx,omitempty"`
	Errors    Errors  `json:"errors"`
	DropRate  float64 `json:"drop_rate"` // (requests - ok - status_4xx) / requests
	P50MS     float64 `json:"p50_ms"`
	P90MS     float64 `json:"p90_ms"`
	P99MS     float64 `json:"p99_ms"`
	P999MS    float64 `json:"p999_ms"`
	MaxMS     float64 `json:"max_ms"`
	// Critical are the requests marked critical, counted apart (null when
	// the plan marks none); they are also counted above
	Critical *Class `json:"critical"`
}

// Class is a subset of the requests, counted on its own.
type Class struct {
	Requests int64   `json:"requests"`
	OK       int64   `json:"ok"`
	Shed     int64   `json:"shed"`
	DropRate float64 `json:"drop_rate"` // (requests - ok) / requests
	P99MS    float64 `json:"p99_ms"`
}

// Errors counts requests by failed outcome; with OK they add up to Requests.
type Errors struct {
	Timeout int64 `json:"timeout"`
	Conn    int64 `json:"conn"`
	E5xx    int64 `json:"5xx"`
	Shed    int64 `json:"shed"`
	Other   int64 `json:"other"`
	// Throttled were refused by the client itself (adaptive throttling),
	// never sent
	Throttled int64 `json:"throttled"`
	// ClientBreaker were refused by the client's own open circuit breaker,
	// never sent
	ClientBreaker int64 `json:"client_breaker"`
	// Unsent were owed by the schedule and never sent: the generator was
	// behind when the load ended (load.saturated says so)
	Unsent int64 `json:"unsent"`
	// LB are 503s the load balancer answered itself, with no server to
	// try (haproxy:, by its counters: lb.own_5xx less its servers' eresp),
	// taken out of shed: not the service shedding load
	LB int64 `json:"lb"`
}

// LoadFigures say whether the generator kept its schedule, from T - before
// to the end, from the clients' own records: when they are saturated, the
// generator, not the service, was the bottleneck, and the figures after T
// count the requests it never sent as dropped.
type LoadFigures struct {
	Intended     int64   `json:"intended"`      // what the open model owed the service
	Sent         int64   `json:"sent"`          // of them, what left
	AchievedRate float64 `json:"achieved_rate"` // sent per second
	LagP50MS     float64 `json:"lag_p50_ms"`    // how late requests left against their intended send time
	LagP90MS     float64 `json:"lag_p90_ms"`
	LagP99MS     float64 `json:"lag_p99_ms"`
	Saturated    bool    `json:"saturated"` // lag p90 over SaturatedLag, or under SaturatedSent of intended sent
}

// Retries come from the clients: every attempt of the requests intended
// from T, retries included.
type Retries struct {
	Attempts      int64   `json:"attempts"`      // sent: a request the client refused itself sent none
	Hedges        int64   `json:"hedges"`        // of attempts, hedged copies
	Amplification float64 `json:"amplification"` // attempts / requests
}

// EdgeTier is the edge replicas in an arm: the policy they ran with (their
// start-up one with the arm's edge settings on it) and their counters,
// summed, from the start of the load to the end.
type EdgeTier struct {
	Config   retry.Layer  `json:"config"`
	Counters EdgeCounters `json:"counters"`
}

// EdgeCounters are the edge replicas' own counters, summed.
type EdgeCounters struct {
	Requests int64            `json:"requests"` // answered, every outcome
	Attempts int64            `json:"attempts"` // calls to the replicas behind, retries included
	Outcomes map[string]int64 `json:"outcomes"` // requests by outcome
}

// Layers is how the requests multiplied down the call chain of a two-tier
// testbed (clients, edges A, replicas B, Postgres C), from the start of
// the load to the end, each figure counted by the layer that received it:
// a retry at any layer shows as more below it.
type Layers struct {
	Requests       int64 `json:"requests"`        // intended by the clients, sent or not (their records)
	ClientAttempts int64 `json:"client_attempts"` // sent by the clients, retries and hedges included (their records)
	Edge           int64 `json:"edge"`            // answered by the edges: herdbench_edge_requests_total
	EdgeAttempts   int64 `json:"edge_attempts"`   // sent by the edges to B: herdbench_edge_upstream_attempts_total
	API            int64 `json:"api"`             // answered by B: herdbench_api_requests_total
	DBAttempts     int64 `json:"db_attempts"`     // item queries B sent to Postgres: herdbench_api_loads_total + load_errors_total
	DBQueries      int64 `json:"db_queries"`      // item queries Postgres completed: pg_stat_statements (db.queries_total)
	// Each layer's own amplification, what it sent per what it received,
	// and the whole chain's: database attempts per client request
	ClientAmp float64 `json:"client_amplification"` // client_attempts / requests
	EdgeAmp   float64 `json:"edge_amplification"`   // edge_attempts / edge
	APIAmp    float64 `json:"api_amplification"`    // db_attempts / api
	EndToEnd  float64 `json:"end_to_end"`           // db_attempts / requests
}

// LayersOf computes the layers' figures from their counts.
func LayersOf(l Layers) *Layers {
	ratio := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	l.ClientAmp, l.EdgeAmp = ratio(l.ClientAttempts, l.Requests), ratio(l.EdgeAttempts, l.Edge)
	l.APIAmp, l.EndToEnd = ratio(l.DBAttempts, l.API), ratio(l.DBAttempts, l.Requests)
	return &l
}

// Row is 100 ms of the timeline; t_ms is its start relative to T.
type Row struct {
	TMS         int64   `json:"t_ms"`
	DBQPS       float64 `json:"db_qps"`
	Hits        int64   `json:"hits"`
	Misses      int64   `json:"misses"`
	Requests    int64   `json:"requests"` // intended in this row
	OK          int64   `json:"ok"`
	Attempts    int64   `json:"attempts"` // attempts sent in this row, retries included
	Unsent      int64   `json:"unsent"`   // intended in this row, never sent
	P99MS       float64 `json:"p99_ms"`
	Connections int64   `json:"connections"`
	// A two-tier testbed's layers in this row, from their own counters
	// (as layers.*): what reached the edges, what they sent to B, what
	// reached B, what B sent to the database
	Edge         int64 `json:"edge,omitempty"`
	EdgeAttempts int64 `json:"edge_attempts,omitempty"`
	API          int64 `json:"api,omitempty"`
	DBAttempts   int64 `json:"db_attempts,omitempty"`
	// A write herd's (the writes trigger): the most of the app role's
	// backends waiting on a lock in one sample (pg_stat_activity), and the
	// write queue's unacknowledged entries at the row's last sample
	LockWaits  int64 `json:"lock_waits,omitempty"`
	QueueDepth int64 `json:"queue_depth,omitempty"`
	// Counts are the subject's own counters in this row, by the names its
	// kind declared (DeclareRowCounters), each written here when not 0:
	// the testbed replicas' loads finished and failed, their pools' new
	// connections and waits given up (as api.*)
	Counts map[string]int64 `json:"-"`
	// The load balancer's in this row, from its own counters (as lb.*):
	// requests it received, attempts it sent to the servers, and each
	// server's attempts by name
	LBRequests int64            `json:"lb_requests,omitempty"`
	LBSent     int64            `json:"lb_sent,omitempty"`
	LBQueue    int64            `json:"lb_queue,omitempty"` // the most requests HAProxy held queued in the row's readings
	LBServers  map[string]int64 `json:"lb_servers,omitempty"`
	// LBWeights are each server's weight at the row's last reading: the
	// weight HAProxy balances it with, its stats page's weight (slowstart
	// ramps it) while the page lists it UP, 0 while it lists it otherwise
	// (a server down takes nothing, though the page still shows its weight)
	LBWeights map[string]int64 `json:"lb_weights,omitempty"`
	// The testbed's API replicas' in this row, each by its name (api-1,
	// ...), from their own counters (herdbench_api_requests_total): the
	// requests each answered, so one replica's herd shows
	Replicas map[string]int64 `json:"replicas,omitempty"`
}
