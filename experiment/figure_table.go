package experiment

import (
	"encoding/json"

	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// armFigures declares every figure of an arm's results, once: its name
// (a path segment, as the results print it), its kind and unit, and where
// it lives in ArmResult. A new figure is a field and one line here.
var armFigures = decl[ArmResult]{
	rawJSON("config", func(a *ArmResult) *json.RawMessage { return &a.Config }),
	group("clients", func(a *ArmResult) *Clients { return &a.Clients }, decl[Clients]{
		count("count", func(c *Clients) *int { return &c.Count }),
		ratio("throttle", func(c *Clients) *float64 { return &c.Throttle }),
		ratio("critical", func(c *Clients) *float64 { return &c.Critical }),
	}),
	group("warm", func(a *ArmResult) *Warm { return &a.Warm }, decl[Warm]{
		count("keys", func(w *Warm) *int { return &w.Keys }),
		count("queries", func(w *Warm) *int64 { return &w.Queries }),
		millis("took_ms", func(w *Warm) *int64 { return &w.TookMS }),
	}),
	group("timing", func(a *ArmResult) *Timing { return &a.Timing }, decl[Timing]{
		millis("fill_ms", func(t *Timing) *int64 { return &t.FillMS }),
		millis("drain_ms", func(t *Timing) *int64 { return &t.DrainMS }),
		opt("after_ms", Duration, "ms", func(t *Timing) **int64 { return &t.AfterMS }).omitEmpty(),
	}),
	group("trigger", func(a *ArmResult) *TriggerResult { return &a.Trigger }, decl[TriggerResult]{
		nullWhen("fired_at", func(t *TriggerResult) bool { return t.FiredAt == nil }),
		opt("ended_ms", Duration, "ms", func(t *TriggerResult) **int64 { return &t.EndedMS }),
		detailFigures,
	}),
	nullable("db", func(a *ArmResult) **DB { return &a.DB }, decl[DB]{
		count("queries", func(d *DB) *int64 { return &d.Queries }),
		count("queries_total", func(d *DB) *int64 { return &d.QueriesTotal }),
		rate("peak_qps", func(d *DB) *float64 { return &d.PeakQPS }),
		rate("baseline_qps", func(d *DB) *float64 { return &d.BaselineQPS }),
		count("peak_connections", func(d *DB) *int64 { return &d.PeakConnections }),
		count("new_connections", func(d *DB) *int64 { return &d.NewConnections }),
	}),
	nullable("cache", func(a *ArmResult) **Cache { return &a.Cache }, decl[Cache]{
		count("hits", func(c *Cache) *int64 { return &c.Hits }),
		count("misses", func(c *Cache) *int64 { return &c.Misses }),
		opt("hit_ratio", Ratio, "", func(c *Cache) **float64 { return &c.HitRatio }),
		count("expired", func(c *Cache) *int64 { return &c.Expired }),
		count("connections_received", func(c *Cache) *int64 { return &c.ConnectionsReceived }),
	}),
	group("http", func(a *ArmResult) *HTTP { return &a.HTTP }, httpFigures),
	family("requests", func(a *ArmResult) *map[string]*RequestFigures { return &a.Requests }, requestFigures),
	group("load", func(a *ArmResult) *LoadFigures { return &a.Load }, loadFigures),
	nullable("workers", func(a *ArmResult) **Workers { return &a.Workers }, decl[Workers]{
		count("count", func(w *Workers) *int { return &w.Count }),
		millis("start_skew_max_ms", func(w *Workers) *float64 { return &w.StartSkewMaxMS }),
		millis("start_skew_p99_ms", func(w *Workers) *float64 { return &w.StartSkewP99MS }),
		nullWhen("each", func(w *Workers) bool { return w.Each == nil }),
	}).omitEmpty(),
	nullable("api", func(a *ArmResult) **APICounters { return &a.API }, apiCounters),
	nullable("edge", func(a *ArmResult) **EdgeTier { return &a.Edge }, decl[EdgeTier]{
		level("config.bulkhead", func(e *EdgeTier) *int { return &e.Config.Bulkhead }),
		count("counters.requests", func(e *EdgeTier) *int64 { return &e.Counters.Requests }),
		count("counters.attempts", func(e *EdgeTier) *int64 { return &e.Counters.Attempts }),
		counts("counters.outcomes", func(e *EdgeTier) *map[string]int64 { return &e.Counters.Outcomes }),
	}).omitEmpty(),
	nullable("layers", func(a *ArmResult) **Layers { return &a.Layers }, decl[Layers]{
		count("requests", func(l *Layers) *int64 { return &l.Requests }),
		count("client_attempts", func(l *Layers) *int64 { return &l.ClientAttempts }),
		count("edge", func(l *Layers) *int64 { return &l.Edge }),
		count("edge_attempts", func(l *Layers) *int64 { return &l.EdgeAttempts }),
		count("api", func(l *Layers) *int64 { return &l.API }),
		count("db_attempts", func(l *Layers) *int64 { return &l.DBAttempts }),
		count("db_queries", func(l *Layers) *int64 { return &l.DBQueries }),
		ratio("client_amplification", func(l *Layers) *float64 { return &l.ClientAmp }),
		ratio("edge_amplification", func(l *Layers) *float64 { return &l.EdgeAmp }),
		ratio("api_amplification", func(l *Layers) *float64 { return &l.APIAmp }),
		ratio("end_to_end", func(l *Layers) *float64 { return &l.EndToEnd }),
	}).omitEmpty(),
	nullable("lb", func(a *ArmResult) **LoadBalancer { return &a.LB }, decl[LoadBalancer]{
		count("requests", func(l *LoadBalancer) *int64 { return &l.Requests }),
		count("server_attempts", func(l *LoadBalancer) *int64 { return &l.ServerAttempts }),
		count("retries", func(l *LoadBalancer) *int64 { return &l.Retries }),
		count("redispatches", func(l *LoadBalancer) *int64 { return &l.Redispatches }),
		count("own_5xx", func(l *LoadBalancer) *int64 { return &l.Own5xx }),
		ratio("amplification", func(l *LoadBalancer) *float64 { return &l.Amplification }),
		ratio("end_to_end", func(l *LoadBalancer) *float64 { return &l.EndToEnd }),
		count("queue_peak", func(l *LoadBalancer) *int64 { return &l.QueuePeak }),
		family("servers", func(l *LoadBalancer) *LBServers { return &l.Servers }, lbServerFigures),
	}).omitEmpty(),
	group("retries", func(a *ArmResult) *Retries { return &a.Retries }, decl[Retries]{
		count("attempts", func(r *Retries) *int64 { return &r.Attempts }),
		count("hedges", func(r *Retries) *int64 { return &r.Hedges }),
		ratio("amplification", func(r *Retries) *float64 { return &r.Amplification }),
	}),
	nullable("burst", func(a *ArmResult) **triggers.BurstResult { return &a.Burst }, decl[triggers.BurstResult]{
		count("clients", func(b *triggers.BurstResult) *int { return &b.Clients }),
		count("ok", func(b *triggers.BurstResult) *int { return &b.OK }),
		numberOf("spread_p50_us", Duration, "us", func(b *triggers.BurstResult) *int64 { return &b.SpreadP50US }),
		numberOf("spread_p99_us", Duration, "us", func(b *triggers.BurstResult) *int64 { return &b.SpreadP99US }),
	}).omitEmpty(),
	nullable("writes", func(a *ArmResult) **WriteFigures { return &a.Writes }, writeFigures).omitEmpty(),
	nullable("windows", func(a *ArmResult) **Windows { return &a.Windows }, decl[Windows]{
		nullable("before", func(w *Windows) **Window { return &w.Before }, windowFigures),
		nullable("during", func(w *Windows) **Window { return &w.During }, windowFigures),
		nullable("after", func(w *Windows) **Window { return &w.After }, windowFigures),
	}),
	opt("depth", Ratio, "", func(a *ArmResult) **float64 { return &a.Depth }).omitEmpty(),
	opt("trend", Ratio, "", func(a *ArmResult) **float64 { return &a.Trend }).omitEmpty(),
	opt("settle_ms", Duration, "ms", func(a *ArmResult) **int64 { return &a.SettleMS }).omitEmpty(),
	nullable("loop", func(a *ArmResult) **Loop { return &a.Loop }, decl[Loop]{
		nullable("attempts_per_request", func(l *Loop) **LoopFigure { return &l.AttemptsPerRequest }, loopFigures(Ratio, "")),
		nullable("db_qps", func(l *Loop) **LoopFigure { return &l.DBQPS }, loopFigures(Rate, "/s")),
		nullable("loads_rps", func(l *Loop) **LoopFigure { return &l.LoadsRPS }, loopFigures(Rate, "/s")),
		nullable("load_errors_rps", func(l *Loop) **LoopFigure { return &l.LoadErrorsRPS }, loopFigures(Rate, "/s")),
		nullable("new_conns_rps", func(l *Loop) **LoopFigure { return &l.NewConnsRPS }, loopFigures(Rate, "/s")),
		nullable("canceled_acquires_rps", func(l *Loop) **LoopFigure { return &l.CanceledAcquiresRPS }, loopFigures(Rate, "/s")),
		nullable("misses_rps", func(l *Loop) **LoopFigure { return &l.MissesRPS }, loopFigures(Rate, "/s")),
	}).omitEmpty(),
	nullable("escape", func(a *ArmResult) **EscapeResult { return &a.Escape }, decl[EscapeResult]{
		rate("from_rps", func(e *EscapeResult) *float64 { return &e.FromRPS }),
		opt("start_ms", Duration, "ms", func(e *EscapeResult) **int64 { return &e.StartMS }),
		opt("rps", Rate, "/s", func(e *EscapeResult) **float64 { return &e.RPS }),
		opt("share", Ratio, "", func(e *EscapeResult) **float64 { return &e.Share }),
		nullWhen("steps", func(e *EscapeResult) bool { return e.Steps == nil }),
	}).omitEmpty(),
	opt("recovery_ms", Duration, "ms", func(a *ArmResult) **int64 { return &a.RecoveryMS }),
	opt("recovery_from_t_ms", Duration, "ms", func(a *ArmResult) **int64 { return &a.RecoveryFromTMS }),
	nullable("aborted", func(a *ArmResult) **Abort { return &a.Aborted }, decl[Abort]{
		millis("at_ms", func(a *Abort) *int64 { return &a.AtMS }),
	}),
	count("missed_samples", func(a *ArmResult) *int { return &a.MissedSamples }),
	nullWhen("timeline", func(a *ArmResult) bool { return a.Timeline == nil }),
	series("prometheus", func(a *ArmResult) map[string][]targets.Point { return a.Prometheus }),
}

// apiCounters are the replicas' own counters (api.*), summed.
var apiCounters = decl[APICounters]{
	count("requests", func(c *APICounters) *int64 { return &c.Requests }),
	count("loads", func(c *APICounters) *int64 { return &c.Loads }),
	count("load_errors", func(c *APICounters) *int64 { return &c.LoadErrors }),
	count("load_retries", func(c *APICounters) *int64 { return &c.LoadRetries }),
	count("early_loads", func(c *APICounters) *int64 { return &c.EarlyLoads }),
	count("coalesced", func(c *APICounters) *int64 { return &c.Coalesced }),
	count("stale_served", func(c *APICounters) *int64 { return &c.StaleServed }),
	count("lock_waits", func(c *APICounters) *int64 { return &c.LockWaits }),
	count("db_new_conns", func(c *APICounters) *int64 { return &c.DBNewConns }),
	count("db_canceled_acquires", func(c *APICounters) *int64 { return &c.DBCanceledAcquires }),
}

// httpFigures are the clients' figures of the requests intended from T
// (http.*, and a write herd's steady writes').
var httpFigures = decl[HTTP]{
	count("requests", func(h *HTTP) *int64 { return &h.Requests }),
	count("ok", func(h *HTTP) *int64 { return &h.OK }),
	count("stale", func(h *HTTP) *int64 { return &h.Stale }),
	count("local", func(h *HTTP) *int64 { return &h.Local }),
	group("errors", func(h *HTTP) *Errors { return &h.Errors }, errorFigures),
	ratio("drop_rate", func(h *HTTP) *float64 { return &h.DropRate }),
	millis("p50_ms", func(h *HTTP) *float64 { return &h.P50MS }),
	millis("p90_ms", func(h *HTTP) *float64 { return &h.P90MS }),
	millis("p99_ms", func(h *HTTP) *float64 { return &h.P99MS }),
	millis("p999_ms", func(h *HTTP) *float64 { return &h.P999MS }),
	millis("max_ms", func(h *HTTP) *float64 { return &h.MaxMS }),
	nullable("critical", func(h *HTTP) **Class { return &h.Critical }, decl[Class]{
		count("requests", func(c *Class) *int64 { return &c.Requests }),
		count("ok", func(c *Class) *int64 { return &c.OK }),
		count("shed", func(c *Class) *int64 { return &c.Shed }),
		ratio("drop_rate", func(c *Class) *float64 { return &c.DropRate }),
		millis("p99_ms", func(c *Class) *float64 { return &c.P99MS }),
	}),
}

var errorFigures = decl[Errors]{
	count("timeout", func(e *Errors) *int64 { return &e.Timeout }),
	count("conn", func(e *Errors) *int64 { return &e.Conn }),
	count("5xx", func(e *Errors) *int64 { return &e.E5xx }),
	count("shed", func(e *Errors) *int64 { return &e.Shed }),
	count("other", func(e *Errors) *int64 { return &e.Other }),
	count("throttled", func(e *Errors) *int64 { return &e.Throttled }),
	count("client_breaker", func(e *Errors) *int64 { return &e.ClientBreaker }),
	count("unsent", func(e *Errors) *int64 { return &e.Unsent }),
	count("lb", func(e *Errors) *int64 { return &e.LB }),
}

// requestFigures are one request class's (requests.NAME.*).
var requestFigures = decl[RequestFigures]{
	count("requests", func(r *RequestFigures) *int64 { return &r.Requests }),
	count("ok", func(r *RequestFigures) *int64 { return &r.OK }),
	group("errors", func(r *RequestFigures) *Errors { return &r.Errors }, errorFigures),
	ratio("drop_rate", func(r *RequestFigures) *float64 { return &r.DropRate }),
	rate("goodput_rps", func(r *RequestFigures) *float64 { return &r.GoodputRPS }),
	millis("p50_ms", func(r *RequestFigures) *float64 { return &r.P50MS }),
	millis("p90_ms", func(r *RequestFigures) *float64 { return &r.P90MS }),
	millis("p99_ms", func(r *RequestFigures) *float64 { return &r.P99MS }),
	millis("max_ms", func(r *RequestFigures) *float64 { return &r.MaxMS }),
	millis("baseline_p99_ms", func(r *RequestFigures) *float64 { return &r.BaselineP99MS }),
	opt("recovery_ms", Duration, "ms", func(r *RequestFigures) **int64 { return &r.RecoveryMS }),
	nullWhen("timeline", func(r *RequestFigures) bool { return r.Timeline == nil }),
}

var loadFigures = decl[LoadFigures]{
	count("intended", func(l *LoadFigures) *int64 { return &l.Intended }),
	count("sent", func(l *LoadFigures) *int64 { return &l.Sent }),
	rate("achieved_rate", func(l *LoadFigures) *float64 { return &l.AchievedRate }),
	millis("lag_p50_ms", func(l *LoadFigures) *float64 { return &l.LagP50MS }),
	millis("lag_p90_ms", func(l *LoadFigures) *float64 { return &l.LagP90MS }),
	millis("lag_p99_ms", func(l *LoadFigures) *float64 { return &l.LagP99MS }),
}

// lbServerFigures are one of the load balancer's servers' (lb.servers.NAME.*).
var lbServerFigures = decl[LBServer]{
	count("attempts", func(s *LBServer) *int64 { return &s.Attempts }),
	count("responses_5xx", func(s *LBServer) *int64 { return &s.Responses5xx }),
	count("conn_errors", func(s *LBServer) *int64 { return &s.ConnErrors }),
	count("downs", func(s *LBServer) *int64 { return &s.Downs }),
	rate("peak_rps", func(s *LBServer) *float64 { return &s.PeakRPS }),
	level("weight", func(s *LBServer) *int64 { return &s.Weight }),
	count("queue_peak", func(s *LBServer) *int64 { return &s.QueuePeak }),
}

var writeFigures = decl[WriteFigures]{
	nullable("steady", func(w *WriteFigures) **SteadyWrites { return &w.Steady }, decl[SteadyWrites]{
		rate("rate", func(s *SteadyWrites) *int { return &s.Rate }),
		count("acked", func(s *SteadyWrites) *int64 { return &s.Acked }),
		group("http", func(s *SteadyWrites) *HTTP { return &s.HTTP }, httpFigures),
		group("load", func(s *SteadyWrites) *LoadFigures { return &s.Load }, loadFigures),
	}).omitEmpty(),
	count("statements", func(w *WriteFigures) *int64 { return &w.Statements }),
	count("rows", func(w *WriteFigures) *int64 { return &w.Rows }),
	count("lock_waits_peak", func(w *WriteFigures) *int64 { return &w.LockWaitsPeak }),
	count("locks_waiting_peak", func(w *WriteFigures) *int64 { return &w.LocksWaitingPeak }),
	count("queue_depth_peak", func(w *WriteFigures) *int64 { return &w.QueueDepthPeak }),
	nullable("lag", func(w *WriteFigures) **WriteLag { return &w.Lag }, decl[WriteLag]{
		count("count", func(l *WriteLag) *int64 { return &l.Count }),
		millis("p50_ms", func(l *WriteLag) *float64 { return &l.P50MS }),
		millis("p99_ms", func(l *WriteLag) *float64 { return &l.P99MS }),
	}),
}

var windowFigures = decl[Window]{
	millis("from_ms", func(w *Window) *int64 { return &w.FromMS }),
	millis("to_ms", func(w *Window) *int64 { return &w.ToMS }),
	rate("offered_rps", func(w *Window) *float64 { return &w.OfferedRPS }),
	rate("attempts_rps", func(w *Window) *float64 { return &w.AttemptsRPS }),
	rate("goodput_rps", func(w *Window) *float64 { return &w.GoodputRPS }),
}

// loopFigures are one figure of the loop before and after, of kind k,
// and their ratio.
func loopFigures(k FigureKind, unit string) decl[LoopFigure] {
	return decl[LoopFigure]{
		numberOf("before", k, unit, func(l *LoopFigure) *float64 { return &l.Before }),
		numberOf("after", k, unit, func(l *LoopFigure) *float64 { return &l.After }),
		ratio("ratio", func(l *LoopFigure) *float64 { return &l.Ratio }),
	}
}

// series declares the target's own series (prometheus.NAME): no figures,
// but a nil one null.
func series[T any](name string, p func(*T) map[string][]targets.Point) member[T] {
	return member[T]{name: name, walk: func(v *T, path string, _ bool, c *collector) {
		for k, s := range p(v) {
			if s == nil && !c.schema {
				c.null(join(path, k))
			}
		}
	}}
}
