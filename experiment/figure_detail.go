package experiment

import "github.com/herdbench/herdbench/triggers"

// detailFigures declares a trigger's detail (trigger.detail.*): the
// figures of the trigger's own type, declared below; of a trigger
// triggers.Default does not know, read back as JSON values, every number
// it holds (a Level). A detail of a type not declared here has none:
// TestEveryTriggersDetailIsDeclared fails on a trigger whose detail
// prints a number its declaration misses.
var detailFigures = member[TriggerResult]{name: "detail", walk: func(t *TriggerResult, path string, _ bool, c *collector) {
	switch d := t.Detail.(type) {
	case nil:
		if !c.schema {
			c.null(path)
		}
	case map[string]any, []any, float64, string, bool:
		if !c.schema {
			jsonFigures(&t.Detail, path, c, func() {})
		}
	case *triggers.ExpireDetail:
		detail(t, d, path, c, decl[triggers.ExpireDetail]{
			count("keys", func(d *triggers.ExpireDetail) *int { return &d.Keys }),
			count("keys_removed", func(d *triggers.ExpireDetail) *int64 { return &d.KeysRemoved }),
			nullable("http_cache", func(d *triggers.ExpireDetail) **triggers.CacheAnswers { return &d.HTTPCache }, cacheAnswers).omitEmpty(),
			nullable("memcached", func(d *triggers.ExpireDetail) **triggers.MemcachedDetail { return &d.Memcached }, memcachedDetail).omitEmpty(),
		})
	case *triggers.FlushDetail:
		detail(t, d, path, c, decl[triggers.FlushDetail]{
			count("keys_flushed", func(d *triggers.FlushDetail) *int64 { return &d.KeysFlushed }),
			nullable("http_cache", func(d *triggers.FlushDetail) **triggers.CacheAnswers { return &d.HTTPCache }, cacheAnswers).omitEmpty(),
			nullable("memcached", func(d *triggers.FlushDetail) **triggers.MemcachedDetail { return &d.Memcached }, memcachedDetail).omitEmpty(),
		})
	case *triggers.TTLDetail:
		detail(t, d, path, c, decl[triggers.TTLDetail]{
			count("keys", func(d *triggers.TTLDetail) *int { return &d.Keys }),
			nullable("memcached", func(d *triggers.TTLDetail) **triggers.MemcachedDetail { return &d.Memcached }, memcachedDetail).omitEmpty(),
		})
	case *triggers.CommandDetail:
		detail(t, d, path, c, decl[triggers.CommandDetail]{
			millis("started_ms", func(d *triggers.CommandDetail) *int64 { return &d.StartedMS }),
			millis("exited_ms", func(d *triggers.CommandDetail) *int64 { return &d.ExitedMS }),
			opt("ended_when_ms", Duration, "ms", func(d *triggers.CommandDetail) **int64 { return &d.EndedWhenMS }).omitEmpty(),
			group("", func(d *triggers.CommandDetail) *triggers.Outcome { return &d.Outcome }, outcome),
			nullable("undo", func(d *triggers.CommandDetail) **triggers.Outcome { return &d.Undo }, outcome).omitEmpty(),
		})
	case *triggers.ConndropDetail:
		detail(t, d, path, c, decl[triggers.ConndropDetail]{
			opt("connections_reset", Count, "", func(d *triggers.ConndropDetail) **int64 { return &d.ConnectionsReset }).omitEmpty(),
		})
	case *triggers.NotifyDetail:
		detail(t, d, path, c, decl[triggers.NotifyDetail]{
			count("keys", func(d *triggers.NotifyDetail) *int { return &d.Keys }),
			count("receivers", func(d *triggers.NotifyDetail) *int64 { return &d.Receivers }),
		})
	case *triggers.OutageDetail:
		detail(t, d, path, c, decl[triggers.OutageDetail]{
			millis("for_ms", func(d *triggers.OutageDetail) *int64 { return &d.ForMS }),
			millis("down_ms", func(d *triggers.OutageDetail) *int64 { return &d.DownMS }),
		})
	case *triggers.RestartDetail:
		detail(t, d, path, c, decl[triggers.RestartDetail]{
			nullWhen("restarted", func(d *triggers.RestartDetail) bool { return d.Restarted == nil }),
			millis("took_ms", func(d *triggers.RestartDetail) *int64 { return &d.TookMS }),
		})
	case *triggers.SlowDBDetail:
		detail(t, d, path, c, decl[triggers.SlowDBDetail]{
			millis("latency_ms", func(d *triggers.SlowDBDetail) *int64 { return &d.LatencyMS }),
			millis("for_ms", func(d *triggers.SlowDBDetail) *int64 { return &d.ForMS }),
			millis("slow_ms", func(d *triggers.SlowDBDetail) *int64 { return &d.SlowMS }),
		})
	case *triggers.WritesDetail:
		detail(t, d, path, c, writesDetail)
	case *triggers.BurstDetail:
		detail(t, d, path, c, decl[triggers.BurstDetail]{})
	}
}}

// detail walks d, the detail t holds, by its declaration: a nil one is
// null; under ownFigures, t then holds a copy of it.
func detail[U any](t *TriggerResult, d *U, path string, c *collector, figs decl[U]) {
	switch {
	case d == nil && c.schema:
		figs.walk(new(U), path, c)
	case d == nil:
		c.null(path)
	default:
		if c.own {
			cp := *d
			d, t.Detail = &cp, &cp
		}
		figs.walk(d, path, c)
	}
}

var writesDetail = decl[triggers.WritesDetail]{
	nullWhen("items", func(d *triggers.WritesDetail) bool { return d.Items == nil }),
	count("sent", func(d *triggers.WritesDetail) *int { return &d.Sent }),
	count("acked", func(d *triggers.WritesDetail) *int { return &d.Acked }),
	count("errors", func(d *triggers.WritesDetail) *int { return &d.Errors }),
	millis("p50_ms", func(d *triggers.WritesDetail) *float64 { return &d.P50MS }),
	millis("p99_ms", func(d *triggers.WritesDetail) *float64 { return &d.P99MS }),
	count("steady_acked", func(d *triggers.WritesDetail) *int64 { return &d.SteadyAcked }),
	count("applied", func(d *triggers.WritesDetail) *int64 { return &d.Applied }),
	count("lost", func(d *triggers.WritesDetail) *int64 { return &d.Lost }),
	count("unacknowledged", func(d *triggers.WritesDetail) *int64 { return &d.Unacknowledged }),
	count("followers", func(d *triggers.WritesDetail) *int { return &d.Followers }),
	count("feed_rows", func(d *triggers.WritesDetail) *int64 { return &d.FeedRows }),
	millis("settle_ms", func(d *triggers.WritesDetail) *int64 { return &d.SettleMS }),
}

var cacheAnswers = decl[triggers.CacheAnswers]{
	count("sent", func(a *triggers.CacheAnswers) *int { return &a.Sent }),
	counts("statuses", func(a *triggers.CacheAnswers) *map[string]int64 { return &a.Statuses }),
	count("errors", func(a *triggers.CacheAnswers) *int { return &a.Errors }),
	millis("took_ms", func(a *triggers.CacheAnswers) *int64 { return &a.TookMS }),
	nullable("command", func(a *triggers.CacheAnswers) **triggers.Outcome { return &a.Command }, outcome).omitEmpty(),
}

var memcachedDetail = decl[triggers.MemcachedDetail]{
	count("sent", func(d *triggers.MemcachedDetail) *int { return &d.Sent }),
	count("found", func(d *triggers.MemcachedDetail) *int { return &d.Found }),
	level("expires_at", func(d *triggers.MemcachedDetail) *int64 { return &d.ExpiresAt }).omitEmpty(),
	millis("took_ms", func(d *triggers.MemcachedDetail) *int64 { return &d.TookMS }),
}

var outcome = decl[triggers.Outcome]{
	level("exit_code", func(o *triggers.Outcome) *int { return &o.ExitCode }),
	millis("took_ms", func(o *triggers.Outcome) *int64 { return &o.TookMS }),
}
