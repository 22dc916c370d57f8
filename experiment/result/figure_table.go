package result

import (
	"encoding/json"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// ArmFigures declares every figure of an arm's results, once: its name
// (a path segment, as the results print it), its kind and unit, and where
// it lives in ArmResult. A new figure is a field and one line here.
var ArmFigures = figure.Decl[ArmResult]{
	figure.RawJSON("config", func(a *ArmResult) *json.RawMessage { return &a.Config }),
	figure.Group("clients", func(a *ArmResult) *arm.Clients { return &a.Clients }, figure.Decl[arm.Clients]{
		figure.CountOf("count", func(c *arm.Clients) *int { return &c.Count }),
		figure.RatioOf("throttle", func(c *arm.Clients) *float64 { return &c.Throttle }),
		figure.RatioOf("critical", func(c *arm.Clients) *float64 { return &c.Critical }),
	}),
	figure.Group("warm", func(a *ArmResult) *Warm { return &a.Warm }, figure.Decl[Warm]{
		figure.CountOf("keys", func(w *Warm) *int { return &w.Keys }),
		figure.CountOf("queries", func(w *Warm) *int64 { return &w.Queries }),
		figure.MillisOf("took_ms", func(w *Warm) *int64 { return &w.TookMS }),
	}),
	figure.Group("timing", func(a *ArmResult) *Timing { return &a.Timing }, figure.Decl[Timing]{
		figure.MillisOf("fill_ms", func(t *Timing) *int64 { return &t.FillMS }),
		figure.MillisOf("drain_ms", func(t *Timing) *int64 { return &t.DrainMS }),
		figure.Opt("after_ms", figure.Duration, "ms", func(t *Timing) **int64 { return &t.AfterMS }).OmitEmpty(),
		figure.Nullable("drain", func(t *Timing) **DrainWaits { return &t.Drain }, figure.Decl[DrainWaits]{
			figure.Opt("db_ms", figure.Duration, "ms", func(d *DrainWaits) **int64 { return &d.DBMS }).OmitEmpty(),
			figure.Opt("cache_ms", figure.Duration, "ms", func(d *DrainWaits) **int64 { return &d.CacheMS }).OmitEmpty(),
			figure.Opt("lb_ms", figure.Duration, "ms", func(d *DrainWaits) **int64 { return &d.LBMS }).OmitEmpty(),
			figure.Opt("prometheus_ms", figure.Duration, "ms", func(d *DrainWaits) **int64 { return &d.PrometheusMS }).OmitEmpty(),
			figure.Opt("lb_sessions", figure.Count, "", func(d *DrainWaits) **int64 { return &d.LBSessions }).OmitEmpty(),
			figure.Opt("cache_commands", figure.Count, "", func(d *DrainWaits) **int64 { return &d.CacheCommands }).OmitEmpty(),
		}).OmitEmpty(),
	}),
	figure.Group("trigger", func(a *ArmResult) *TriggerResult { return &a.Trigger }, figure.Decl[TriggerResult]{
		figure.NullWhen("fired_at", func(t *TriggerResult) bool { return t.FiredAt == nil }),
		figure.Opt("ended_ms", figure.Duration, "ms", func(t *TriggerResult) **int64 { return &t.EndedMS }),
		detailFigures,
	}),
	figure.Nullable("db", func(a *ArmResult) **DB { return &a.DB }, figure.Decl[DB]{
		figure.CountOf("queries", func(d *DB) *int64 { return &d.Queries }),
		figure.CountOf("queries_total", func(d *DB) *int64 { return &d.QueriesTotal }),
		figure.CountOf("drain_queries", func(d *DB) *int64 { return &d.DrainQueries }).OmitEmpty(),
		figure.RatioOf("drain_share", func(d *DB) *float64 { return &d.DrainShare }).OmitEmpty(),
		figure.RateOf("peak_qps", func(d *DB) *float64 { return &d.PeakQPS }),
		figure.RateOf("baseline_qps", func(d *DB) *float64 { return &d.BaselineQPS }),
		figure.CountOf("peak_connections", func(d *DB) *int64 { return &d.PeakConnections }),
		figure.CountOf("new_connections", func(d *DB) *int64 { return &d.NewConnections }),
		figure.Opt("above_baseline_ms", figure.Duration, "ms", func(d *DB) **int64 { return &d.AboveBaselineMS }).OmitEmpty(),
	}),
	figure.Nullable("cache", func(a *ArmResult) **Cache { return &a.Cache }, figure.Decl[Cache]{
		figure.CountOf("hits", func(c *Cache) *int64 { return &c.Hits }),
		figure.CountOf("misses", func(c *Cache) *int64 { return &c.Misses }),
		figure.Opt("hit_ratio", figure.Ratio, "", func(c *Cache) **float64 { return &c.HitRatio }),
		figure.CountOf("expired", func(c *Cache) *int64 { return &c.Expired }),
		figure.CountOf("connections_received", func(c *Cache) *int64 { return &c.ConnectionsReceived }),
	}),
	figure.Group("http", func(a *ArmResult) *HTTP { return &a.HTTP }, httpFigures),
	figure.Family("requests", func(a *ArmResult) *map[string]*RequestFigures { return &a.Requests }, requestFigures),
	figure.Group("load", func(a *ArmResult) *LoadFigures { return &a.Load }, loadFigures),
	figure.Nullable("workers", func(a *ArmResult) **Workers { return &a.Workers }, figure.Decl[Workers]{
		figure.CountOf("count", func(w *Workers) *int { return &w.Count }),
		figure.MillisOf("start_skew_max_ms", func(w *Workers) *float64 { return &w.StartSkewMaxMS }),
		figure.MillisOf("start_skew_p99_ms", func(w *Workers) *float64 { return &w.StartSkewP99MS }),
		figure.NullWhen("each", func(w *Workers) bool { return w.Each == nil }),
	}).OmitEmpty(),
	figure.Named("api", func(a *ArmResult) *[]Counter { return (*[]Counter)(&a.API) }, counterName, counterValue, DeclaredCounters),
	figure.Nullable("edge", func(a *ArmResult) **EdgeTier { return &a.Edge }, figure.Decl[EdgeTier]{
		figure.LevelOf("config.bulkhead", func(e *EdgeTier) *int { return &e.Config.Bulkhead }),
		figure.CountOf("counters.requests", func(e *EdgeTier) *int64 { return &e.Counters.Requests }),
		figure.CountOf("counters.attempts", func(e *EdgeTier) *int64 { return &e.Counters.Attempts }),
		figure.Counts("counters.outcomes", func(e *EdgeTier) *map[string]int64 { return &e.Counters.Outcomes }),
	}).OmitEmpty(),
	figure.Nullable("layers", func(a *ArmResult) **Layers { return &a.Layers }, figure.Decl[Layers]{
		figure.CountOf("requests", func(l *Layers) *int64 { return &l.Requests }),
		figure.CountOf("client_attempts", func(l *Layers) *int64 { return &l.ClientAttempts }),
		figure.CountOf("edge", func(l *Layers) *int64 { return &l.Edge }),
		figure.CountOf("edge_attempts", func(l *Layers) *int64 { return &l.EdgeAttempts }),
		figure.CountOf("api", func(l *Layers) *int64 { return &l.API }),
		figure.CountOf("db_attempts", func(l *Layers) *int64 { return &l.DBAttempts }),
		figure.CountOf("db_queries", func(l *Layers) *int64 { return &l.DBQueries }),
		figure.RatioOf("client_amplification", func(l *Layers) *float64 { return &l.ClientAmp }),
		figure.RatioOf("edge_amplification", func(l *Layers) *float64 { return &l.EdgeAmp }),
		figure.RatioOf("api_amplification", func(l *Layers) *float64 { return &l.APIAmp }),
		figure.RatioOf("end_to_end", func(l *Layers) *float64 { return &l.EndToEnd }),
	}).OmitEmpty(),
	figure.Nullable("lb", func(a *ArmResult) **LoadBalancer { return &a.LB }, figure.Decl[LoadBalancer]{
		figure.CountOf("requests", func(l *LoadBalancer) *int64 { return &l.Requests }),
		figure.CountOf("server_attempts", func(l *LoadBalancer) *int64 { return &l.ServerAttempts }),
		figure.CountOf("retries", func(l *LoadBalancer) *int64 { return &l.Retries }),
		figure.CountOf("redispatches", func(l *LoadBalancer) *int64 { return &l.Redispatches }),
		figure.CountOf("own_5xx", func(l *LoadBalancer) *int64 { return &l.Own5xx }),
		figure.RatioOf("amplification", func(l *LoadBalancer) *float64 { return &l.Amplification }),
		figure.RatioOf("end_to_end", func(l *LoadBalancer) *float64 { return &l.EndToEnd }),
		figure.CountOf("queue_peak", func(l *LoadBalancer) *int64 { return &l.QueuePeak }),
		figure.Family("servers", func(l *LoadBalancer) *LBServers { return &l.Servers }, lbServerFigures),
	}).OmitEmpty(),
	figure.Group("retries", func(a *ArmResult) *Retries { return &a.Retries }, figure.Decl[Retries]{
		figure.CountOf("attempts", func(r *Retries) *int64 { return &r.Attempts }),
		figure.CountOf("hedges", func(r *Retries) *int64 { return &r.Hedges }),
		figure.RatioOf("amplification", func(r *Retries) *float64 { return &r.Amplification }),
	}),
	figure.Nullable("burst", func(a *ArmResult) **triggers.BurstResult { return &a.Burst }, figure.Decl[triggers.BurstResult]{
		figure.CountOf("clients", func(b *triggers.BurstResult) *int { return &b.Clients }),
		figure.CountOf("ok", func(b *triggers.BurstResult) *int { return &b.OK }),
		figure.NumberOf("spread_p50_us", figure.Duration, "us", func(b *triggers.BurstResult) *int64 { return &b.SpreadP50US }),
		figure.NumberOf("spread_p99_us", figure.Duration, "us", func(b *triggers.BurstResult) *int64 { return &b.SpreadP99US }),
	}).OmitEmpty(),
	figure.Nullable("writes", func(a *ArmResult) **WriteFigures { return &a.Writes }, writeFigures).OmitEmpty(),
	figure.Nullable("windows", func(a *ArmResult) **Windows { return &a.Windows }, figure.Decl[Windows]{
		figure.Nullable("before", func(w *Windows) **Window { return &w.Before }, windowFigures),
		figure.Nullable("during", func(w *Windows) **Window { return &w.During }, windowFigures),
		figure.Nullable("after", func(w *Windows) **Window { return &w.After }, windowFigures),
	}),
	figure.Opt("depth", figure.Ratio, "", func(a *ArmResult) **float64 { return &a.Depth }).OmitEmpty(),
	figure.Opt("trend", figure.Ratio, "", func(a *ArmResult) **float64 { return &a.Trend }).OmitEmpty(),
	figure.Opt("settle_ms", figure.Duration, "ms", func(a *ArmResult) **int64 { return &a.SettleMS }).OmitEmpty(),
	figure.Nullable("loop", func(a *ArmResult) **Loop { return &a.Loop }, figure.Decl[Loop]{
		figure.Nullable("attempts_per_request", func(l *Loop) **LoopFigure { return &l.AttemptsPerRequest }, loopFigures(figure.Ratio, "")),
		figure.Nullable("db_qps", func(l *Loop) **LoopFigure { return &l.DBQPS }, loopFigures(figure.Rate, "/s")),
		figure.Keyed("_rps", func(l *Loop) *map[string]*LoopFigure { return &l.Counts }, rowCounterNames, loopFigures(figure.Rate, "/s")),
		figure.Nullable("misses_rps", func(l *Loop) **LoopFigure { return &l.MissesRPS }, loopFigures(figure.Rate, "/s")),
	}).OmitEmpty(),
	figure.Nullable("escape", func(a *ArmResult) **EscapeResult { return &a.Escape }, figure.Decl[EscapeResult]{
		figure.RateOf("from_rps", func(e *EscapeResult) *float64 { return &e.FromRPS }),
		figure.Opt("start_ms", figure.Duration, "ms", func(e *EscapeResult) **int64 { return &e.StartMS }),
		figure.Opt("rps", figure.Rate, "/s", func(e *EscapeResult) **float64 { return &e.RPS }),
		figure.Opt("share", figure.Ratio, "", func(e *EscapeResult) **float64 { return &e.Share }),
		figure.NullWhen("steps", func(e *EscapeResult) bool { return e.Steps == nil }),
	}).OmitEmpty(),
	figure.Opt("recovery_ms", figure.Duration, "ms", func(a *ArmResult) **int64 { return &a.RecoveryMS }),
	figure.Opt("recovery_from_t_ms", figure.Duration, "ms", func(a *ArmResult) **int64 { return &a.RecoveryFromTMS }),
	figure.Opt("relapse_from_t_ms", figure.Duration, "ms", func(a *ArmResult) **int64 { return &a.RelapseFromTMS }).OmitEmpty(),
	figure.Nullable("model", func(a *ArmResult) **ModelExpectation { return &a.Model }, modelFigures).OmitEmpty(),
	figure.Nullable("aborted", func(a *ArmResult) **Abort { return &a.Aborted }, figure.Decl[Abort]{
		figure.MillisOf("at_ms", func(a *Abort) *int64 { return &a.AtMS }),
	}),
	figure.CountOf("missed_samples", func(a *ArmResult) *int { return &a.MissedSamples }),
	figure.NullWhen("timeline", func(a *ArmResult) bool { return a.Timeline == nil }),
	series("prometheus", func(a *ArmResult) map[string][]targets.Point { return a.Prometheus }),
}

// rowCounterNames are the declared row counters' names.
func rowCounterNames() []string {
	var out []string
	for _, c := range DeclaredRowCounters() {
		out = append(out, c.Name)
	}
	return out
}

// counterName and counterValue read a subject's counter for its figure.
func counterName(c *Counter) string  { return c.Name }
func counterValue(c *Counter) *int64 { return &c.Value }

// httpFigures are the clients' figures of the requests intended from T
// (http.*, and a write herd's steady writes').
var httpFigures = figure.Decl[HTTP]{
	figure.CountOf("requests", func(h *HTTP) *int64 { return &h.Requests }),
	figure.CountOf("ok", func(h *HTTP) *int64 { return &h.OK }),
	figure.CountOf("stale", func(h *HTTP) *int64 { return &h.Stale }),
	figure.CountOf("local", func(h *HTTP) *int64 { return &h.Local }),
	figure.CountOf("status_4xx", func(h *HTTP) *int64 { return &h.Status4xx }).OmitEmpty(),
	figure.Group("errors", func(h *HTTP) *Errors { return &h.Errors }, errorFigures),
	figure.RatioOf("drop_rate", func(h *HTTP) *float64 { return &h.DropRate }),
	figure.MillisOf("p50_ms", func(h *HTTP) *float64 { return &h.P50MS }),
	figure.MillisOf("p90_ms", func(h *HTTP) *float64 { return &h.P90MS }),
	figure.MillisOf("p99_ms", func(h *HTTP) *float64 { return &h.P99MS }),
	figure.MillisOf("p999_ms", func(h *HTTP) *float64 { return &h.P999MS }),
	figure.MillisOf("max_ms", func(h *HTTP) *float64 { return &h.MaxMS }),
	figure.Nullable("critical", func(h *HTTP) **Class { return &h.Critical }, figure.Decl[Class]{
		figure.CountOf("requests", func(c *Class) *int64 { return &c.Requests }),
		figure.CountOf("ok", func(c *Class) *int64 { return &c.OK }),
		figure.CountOf("shed", func(c *Class) *int64 { return &c.Shed }),
		figure.RatioOf("drop_rate", func(c *Class) *float64 { return &c.DropRate }),
		figure.MillisOf("p99_ms", func(c *Class) *float64 { return &c.P99MS }),
	}),
}

var errorFigures = figure.Decl[Errors]{
	figure.CountOf("timeout", func(e *Errors) *int64 { return &e.Timeout }),
	figure.CountOf("conn", func(e *Errors) *int64 { return &e.Conn }),
	figure.CountOf("5xx", func(e *Errors) *int64 { return &e.E5xx }),
	figure.CountOf("shed", func(e *Errors) *int64 { return &e.Shed }),
	figure.CountOf("other", func(e *Errors) *int64 { return &e.Other }),
	figure.CountOf("throttled", func(e *Errors) *int64 { return &e.Throttled }),
	figure.CountOf("client_breaker", func(e *Errors) *int64 { return &e.ClientBreaker }),
	figure.CountOf("unsent", func(e *Errors) *int64 { return &e.Unsent }),
	figure.CountOf("lb", func(e *Errors) *int64 { return &e.LB }),
}

// requestFigures are one request class's (requests.NAME.*).
var requestFigures = figure.Decl[RequestFigures]{
	figure.CountOf("requests", func(r *RequestFigures) *int64 { return &r.Requests }),
	figure.CountOf("ok", func(r *RequestFigures) *int64 { return &r.OK }),
	figure.Group("errors", func(r *RequestFigures) *Errors { return &r.Errors }, errorFigures),
	figure.RatioOf("drop_rate", func(r *RequestFigures) *float64 { return &r.DropRate }),
	figure.RateOf("goodput_rps", func(r *RequestFigures) *float64 { return &r.GoodputRPS }),
	figure.MillisOf("p50_ms", func(r *RequestFigures) *float64 { return &r.P50MS }),
	figure.MillisOf("p90_ms", func(r *RequestFigures) *float64 { return &r.P90MS }),
	figure.MillisOf("p99_ms", func(r *RequestFigures) *float64 { return &r.P99MS }),
	figure.MillisOf("max_ms", func(r *RequestFigures) *float64 { return &r.MaxMS }),
	figure.MillisOf("baseline_p99_ms", func(r *RequestFigures) *float64 { return &r.BaselineP99MS }),
	figure.Opt("recovery_ms", figure.Duration, "ms", func(r *RequestFigures) **int64 { return &r.RecoveryMS }),
	figure.Opt("relapse_from_t_ms", figure.Duration, "ms", func(r *RequestFigures) **int64 { return &r.RelapseFromTMS }).OmitEmpty(),
	figure.NullWhen("timeline", func(r *RequestFigures) bool { return r.Timeline == nil }),
}

var loadFigures = figure.Decl[LoadFigures]{
	figure.CountOf("intended", func(l *LoadFigures) *int64 { return &l.Intended }),
	figure.CountOf("sent", func(l *LoadFigures) *int64 { return &l.Sent }),
	figure.RateOf("achieved_rate", func(l *LoadFigures) *float64 { return &l.AchievedRate }),
	figure.MillisOf("lag_p50_ms", func(l *LoadFigures) *float64 { return &l.LagP50MS }),
	figure.MillisOf("lag_p90_ms", func(l *LoadFigures) *float64 { return &l.LagP90MS }),
	figure.MillisOf("lag_p99_ms", func(l *LoadFigures) *float64 { return &l.LagP99MS }),
}

// lbReturnFigures are a returning server's (lb.servers.NAME.return.*).
var lbReturnFigures = figure.Decl[LBReturn]{
	figure.MillisOf("back_ms", func(r *LBReturn) *int64 { return &r.BackMS }),
	figure.RateOf("first_second_rps", func(r *LBReturn) *float64 { return &r.FirstSecondRPS }),
	figure.RatioOf("share", func(r *LBReturn) *float64 { return &r.Share }),
	figure.Opt("full_share_ms", figure.Duration, "ms", func(r *LBReturn) **int64 { return &r.FullShareMS }),
}

// lbServerFigures are one of the load balancer's servers' (lb.servers.NAME.*).
var lbServerFigures = figure.Decl[LBServer]{
	figure.CountOf("attempts", func(s *LBServer) *int64 { return &s.Attempts }),
	figure.CountOf("responses_5xx", func(s *LBServer) *int64 { return &s.Responses5xx }),
	figure.CountOf("conn_errors", func(s *LBServer) *int64 { return &s.ConnErrors }),
	figure.CountOf("downs", func(s *LBServer) *int64 { return &s.Downs }),
	figure.RateOf("peak_rps", func(s *LBServer) *float64 { return &s.PeakRPS }),
	figure.LevelOf("weight", func(s *LBServer) *int64 { return &s.Weight }),
	figure.CountOf("queue_peak", func(s *LBServer) *int64 { return &s.QueuePeak }),
	figure.Nullable("return", func(s *LBServer) **LBReturn { return &s.Return }, lbReturnFigures).OmitEmpty(),
}

var writeFigures = figure.Decl[WriteFigures]{
	figure.Nullable("steady", func(w *WriteFigures) **SteadyWrites { return &w.Steady }, figure.Decl[SteadyWrites]{
		figure.RateOf("rate", func(s *SteadyWrites) *int { return &s.Rate }),
		figure.CountOf("acked", func(s *SteadyWrites) *int64 { return &s.Acked }),
		figure.Group("http", func(s *SteadyWrites) *HTTP { return &s.HTTP }, httpFigures),
		figure.Group("load", func(s *SteadyWrites) *LoadFigures { return &s.Load }, loadFigures),
	}).OmitEmpty(),
	figure.CountOf("statements", func(w *WriteFigures) *int64 { return &w.Statements }),
	figure.CountOf("rows", func(w *WriteFigures) *int64 { return &w.Rows }),
	figure.CountOf("lock_waits_peak", func(w *WriteFigures) *int64 { return &w.LockWaitsPeak }),
	figure.CountOf("locks_waiting_peak", func(w *WriteFigures) *int64 { return &w.LocksWaitingPeak }),
	figure.CountOf("queue_depth_peak", func(w *WriteFigures) *int64 { return &w.QueueDepthPeak }),
	figure.Nullable("lag", func(w *WriteFigures) **WriteLag { return &w.Lag }, figure.Decl[WriteLag]{
		figure.CountOf("count", func(l *WriteLag) *int64 { return &l.Count }),
		figure.MillisOf("p50_ms", func(l *WriteLag) *float64 { return &l.P50MS }),
		figure.MillisOf("p99_ms", func(l *WriteLag) *float64 { return &l.P99MS }),
	}),
}

var windowFigures = figure.Decl[Window]{
	figure.MillisOf("from_ms", func(w *Window) *int64 { return &w.FromMS }),
	figure.MillisOf("to_ms", func(w *Window) *int64 { return &w.ToMS }),
	figure.RateOf("offered_rps", func(w *Window) *float64 { return &w.OfferedRPS }),
	figure.RateOf("attempts_rps", func(w *Window) *float64 { return &w.AttemptsRPS }),
	figure.RateOf("goodput_rps", func(w *Window) *float64 { return &w.GoodputRPS }),
}

// loopFigures are one figure of the loop before and after, of kind k,
// and their ratio.
func loopFigures(k figure.Kind, unit string) figure.Decl[LoopFigure] {
	return figure.Decl[LoopFigure]{
		figure.NumberOf("before", k, unit, func(l *LoopFigure) *float64 { return &l.Before }),
		figure.NumberOf("after", k, unit, func(l *LoopFigure) *float64 { return &l.After }),
		figure.RatioOf("ratio", func(l *LoopFigure) *float64 { return &l.Ratio }),
	}
}

// series declares the target's own series (prometheus.NAME): no figures,
// but a nil one null.
func series[T any](name string, p func(*T) map[string][]targets.Point) figure.Member[T] {
	return figure.Member[T]{Name: name, Walk: func(v *T, path string, _ bool, c *figure.Collector) {
		for k, s := range p(v) {
			if s == nil && !c.Schema {
				c.Null(figure.Join(path, k))
			}
		}
	}}
}

// detailFigures declares a trigger's detail (trigger.detail.*): the
// figures its own type declares beside it in package triggers
// (figure.Declared); of a trigger triggers.Default does not know, read
// back as JSON values, every number it holds (a Level). A detail of a
// type that declares none has none: TestEveryTriggersDetailIsDeclared
// fails on a trigger whose detail prints a number its declaration misses.
var detailFigures = figure.Member[TriggerResult]{Name: "detail", Walk: func(t *TriggerResult, path string, _ bool, c *figure.Collector) {
	switch d := t.Detail.(type) {
	case nil:
		if !c.Schema {
			c.Null(path)
		}
	case map[string]any, []any, float64, string, bool:
		if !c.Schema {
			figure.JSON(&t.Detail, path, c, func() {})
		}
	case figure.Declared:
		t.Detail = d.Figures(path, c)
	}
}}
