package result

// WriteFigures are what a write herd (the writes trigger) cost the
// database and the queue, from the load's start until every acknowledged
// write was applied (or the settle gave up).
type WriteFigures struct {
	// Steady are the trigger's steady writes (write_rate), from the
	// clients' records; null without them
	Steady *SteadyWrites `json:"steady,omitempty"`
	// Statements and Rows are the pg_stat_statements delta (calls, rows)
	// of the testbed's write statements by the app role: direct's UPDATE,
	// the queue's batch apply, coalesce's flush; on MariaDB, the delta of
	// their digests (COUNT_STAR, rows affected and sent), two or three
	// statements a write or batch (WriteObserver.WriteStatements)
	Statements int64 `json:"statements"`
	Rows       int64 `json:"rows"`
	// LockWaitsPeak is the most of the app role's backends waiting on a
	// lock in one 100 ms sample (pg_stat_activity wait_event_type Lock);
	// LocksWaitingPeak the most lock requests not granted (pg_locks)
	LockWaitsPeak    int64 `json:"lock_waits_peak"`
	LocksWaitingPeak int64 `json:"locks_waiting_peak"`
	// QueueDepthPeak is the most queued writes not yet acknowledged by
	// the consumers in one sample (XINFO GROUPS: lag plus pending)
	QueueDepthPeak int64 `json:"queue_depth_peak"`
	// Lag is the queue's lag from acknowledgement to applied, from the
	// replicas' herdbench_api_write_lag_seconds; null when not read
	Lag *WriteLag `json:"lag"`
}

// WriteLag is how long acknowledged writes waited to be applied: their
// count and percentiles, as the subject measured them.
type WriteLag struct {
	Count int64   `json:"count"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// SteadyWrites are the steady writes a trigger sent beside the reads
// (triggers.Workload), filed as the reads are: http from T, load over the
// windows, latency from each write's intended send time.
type SteadyWrites struct {
	Rate  int         `json:"rate"`
	Acked int64       `json:"acked"` // answered 2xx over the whole load, warmup included: what must be applied
	HTTP  HTTP        `json:"http"`
	Load  LoadFigures `json:"load"`
}
