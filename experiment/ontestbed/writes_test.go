package ontestbed_test

import (
	"context"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// writeArms are one arm per write strategy; the queue's consumers apply
// at most applyRate writes/s each (0: unbounded).
func writeArms(applyRate float64) []arm.Arm {
	var arms []arm.Arm
	for _, s := range replica.WriteStrategies {
		cfg := replica.DefaultConfig
		cfg.WriteStrategy, cfg.CoalesceInterval, cfg.ApplyRate = s, herd.Duration(200*time.Millisecond), applyRate
		arms = append(arms, arm.Arm{Name: s, Knobs: replica.FullPatch(cfg)})
	}
	return arms
}

// writePlan is a write herd of 300 likes on 2 items at T, over 100 reads/s,
// with options added.
func writePlan(arms []arm.Arm, options ...string) plan.Plan {
	return plan.Plan{Arms: arms, Trigger: "writes", HotKeys: 10, Keys: 1000, Zipf: 1.1, Rate: 100, Clients: 1,
		Timeout: herd.Duration(2 * time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(1500 * time.Millisecond), Seed: 3,
		Triggers: TriggerOptions(append([]string{"write_burst", "300", "write_keys", "2"}, options...)...)}
}

// pgScalar reads one number from Postgres, here in the test, apart from
// what the run reads.
func pgScalar(t *testing.T, tg *subject.Testbed, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := tg.DB.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A write herd on the testbed, under each write strategy: at T the burst
// lands on the hottest items while 40 likes/s arrive steadily; after the
// arm, Postgres holds every write the replicas acknowledged, and the
// default gate (no acknowledged write lost) passes on every arm. Each
// write figure is tied to its source: the likes and the write statements
// in Postgres, read here, and the queue's lag to what it applied.
func TestWriteHerdLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 2)
	arms := writeArms(400) // the queue drains the burst in about a quarter second per replica
	p := writePlan(arms, "write_rate", "40")
	likes := func() int64 { return pgScalar(t, tg, `SELECT coalesce(sum(n), 0)::bigint FROM likes`) }
	statements := func() int64 {
		return pgScalar(t, tg, `SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s
			JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1 AND s.query = ANY($2)`,
			tg.Role, []string{api.WriteDirectQuery, api.WriteApplyQuery, api.WriteFlushQuery})
	}
	before, statementsBefore := likes(), statements()
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	var applied, acked, stmts int64
	for _, a := range rep.Arms {
		d, ok := a.Trigger.Detail.(*triggers.WritesDetail)
		if !ok {
			t.Fatalf("%s: trigger detail %T; want *triggers.WritesDetail", a.Name, a.Trigger.Detail)
		}
		w := a.Writes
		if w == nil || w.Steady == nil {
			t.Fatalf("%s: writes %+v; want the write figures with the steady writes", a.Name, w)
		}
		t.Logf("%s: %+v; writes %+v, steady %+v, lag %+v", a.Name, *d, *w, *w.Steady, w.Lag)
		endedAfter(t, a, int64(d.P99MS)) // the burst answered: its p99 counts from T
		applied, acked, stmts = applied+d.Applied, acked+int64(d.Acked)+d.SteadyAcked, stmts+w.Statements
		if d.Sent != 300 || d.Acked != 300 || d.Lost != 0 || len(d.Items) != 2 || d.Applied != 300+d.SteadyAcked {
			t.Errorf("%s: %+v; want 300 sent and acknowledged to 2 items, each acknowledged write applied, none lost", a.Name, *d)
		}
		if d.Followers != 0 || d.FeedRows != 0 {
			t.Errorf("%s: %d followers, %d feed rows; want no fan-out without write_fanout", a.Name, d.Followers, d.FeedRows)
		}
		if s := w.Steady; s.Acked != d.SteadyAcked || s.Acked < 40 || s.HTTP.Requests != 60 || s.Rate != 40 {
			t.Errorf("%s: steady writes %+v; want 40/s, 60 intended from T over 1.5 s, and the acknowledged ones settled (%d)", a.Name, *s, d.SteadyAcked)
		}
		switch a.Name {
		case replica.WriteDirect: // one UPDATE per write, each one row
			if w.Statements != d.Applied || w.Rows != d.Applied {
				t.Errorf("direct: %d write statements, %d rows; want one of each per write applied (%d)", w.Statements, w.Rows, d.Applied)
			}
		case replica.WriteQueue: // batches: fewer statements than writes; every write's lag measured
			if w.Statements >= d.Applied || w.Lag == nil || w.Lag.Count != d.Applied || w.QueueDepthPeak < 1 {
				t.Errorf("queue: %d statements for %d writes, lag %+v, depth peak %d; want batches, the lag of each write, a queue seen", w.Statements, d.Applied, w.Lag, w.QueueDepthPeak)
			}
		case replica.WriteCoalesce: // a flush adds many writes at once
			if w.Statements < 1 || w.Statements >= d.Applied {
				t.Errorf("coalesce: %d flushes for %d writes; want fewer flushes than writes", w.Statements, d.Applied)
			}
		}
	}
	if got := likes() - before; got != applied || got != acked {
		t.Errorf("Postgres' likes rose by %d over the run; the arms applied %d and acknowledged %d; want all equal", got, applied, acked)
	}
	// the arms' statements are the run's, but for one an arm may leave
	// behind after its figures held still: a busy machine's queue consumer
	// claims a batch again once it sat 2 s unacknowledged, and its statement
	// applies nothing the first did not (the likes above rose by exactly
	// the acknowledged writes); CI once counted 491 against the arms' 490
	if got := statements() - statementsBefore; got < stmts || got > stmts+int64(len(rep.Arms)) {
		t.Errorf("pg_stat_statements counted %d write statements over the run; the arms %d; want those, and at most one more an arm", got, stmts)
	}
	var lostGates int
	for _, g := range rep.Gates {
		if g.Path == "trigger.detail.lost" {
			lostGates++
			if !g.Pass || g.Measured == nil || *g.Measured != 0 {
				t.Errorf("gate %s on %s: %+v; want it measured at 0 and passed", g.Gate, g.Arm, g)
			}
		}
	}
	if lostGates != len(arms) {
		t.Errorf("%d arms gated on lost writes; want the default gate on all %d", lostGates, len(arms))
	}
}

// Replicas killed (SIGKILL) in the middle of the burst lose nothing they
// acknowledged under direct, which wrote it before answering, or under the
// queue, whose consumers pick up what the killed ones left pending; under
// coalesce, what they held is lost, the results count it, and the default
// gate fails that arm alone. Every like that was applied fanned out whole
// to its item's 4 followers, crash or not: the counters and the feed rows
// commit together, counted here in Postgres.
func TestWriteHerdSurvivesAKillMidBurst(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 2)
	arms := writeArms(400)
	arms[2].Knobs = arms[2].Knobs.With("coalesce_interval", herd.Duration(time.Minute)) // nothing flushed before the kill
	// the queue's survivors claim a dead consumer's writes after 2 s idle
	// (api's claimIdle): 5 s to settle is enough for them, and coalesce's
	// loss is certain, not worth the default 15 s wait
	p := writePlan(arms, "write_restart", "api", "write_restart_after", "30ms", "write_kill", "true", "write_fanout", "4",
		"write_settle", "5s")
	feed := func() int64 { return pgScalar(t, tg, `SELECT count(*) FROM feed`) }
	feedBefore := feed()
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, a := range rep.Arms {
		d := a.Trigger.Detail.(*triggers.WritesDetail)
		t.Logf("%s: %+v", a.Name, *d)
		rows += d.FeedRows
		if d.Followers != 4 || d.FeedRows != 4*d.Applied {
			t.Errorf("%s: %d feed rows for %d likes applied to items with %d followers; want 4 per like", a.Name, d.FeedRows, d.Applied, d.Followers)
		}
		if len(d.Restarted) == 0 || d.Acked+d.Errors != 300 || d.Acked == 0 {
			t.Errorf("%s: %+v; want the replicas killed mid-burst, some writes acknowledged", a.Name, *d)
		}
		if d.Unacknowledged != max(d.Applied-int64(d.Acked), 0) {
			t.Errorf("%s: %d applied beyond the %d acknowledged; the detail says %d", a.Name, d.Applied-int64(d.Acked), d.Acked, d.Unacknowledged)
		}
		if lost := a.Name == replica.WriteCoalesce; lost != (d.Lost > 0) || d.Lost != max(int64(d.Acked)-d.Applied, 0) {
			t.Errorf("%s: %d lost of %d acknowledged, %d applied; want lost only under coalesce, and counted", a.Name, d.Lost, d.Acked, d.Applied)
		}
	}
	if got := feed() - feedBefore; got != rows {
		t.Errorf("Postgres' feed grew by %d rows over the run; the arms counted %d", got, rows)
	}
	for _, g := range rep.Gates {
		if g.Path == "trigger.detail.lost" && g.Pass != (g.Arm != replica.WriteCoalesce) {
			t.Errorf("gate %s on %s: pass %v; want it failed on coalesce alone", g.Gate, g.Arm, g.Pass)
		}
	}
}

// When the wait for the acknowledged writes gives up, the trigger still
// reads what arrived, the likes and their feed rows in one snapshot: a
// like fired at T and three applied behind its back fan out to the item's
// 2 followers, and the 6 steady writes it is told of and never gets are
// lost.
func TestWriteSettleCountsTheFanOutWhenItGivesUp(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 1)
	ctx := context.Background()
	w := triggers.NewWrites()
	w.Burst, w.Keys, w.Fanout = 1, 1, 2
	w.SettleFor = herd.Duration(time.Second) // the 6 steady writes never come: give up soon
	env := triggers.Env{Likes: tg.Grants.Likes, HotKeys: []string{"5"}, API: tg.Endpoints}
	armed, err := w.Prepare(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	f, err := armed.Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		pgScalar(t, tg, api.WriteDirectQuery, 5, 1)
	}
	d := w.Settle(ctx, env, f.Detail, 6).(*triggers.WritesDetail)
	if d.Acked != 1 || d.Applied != 4 || d.Lost != 3 || d.Followers != 2 || d.FeedRows != 8 {
		t.Errorf("%+v; want 1 acknowledged at T, 4 applied, 8 feed rows for 2 followers each, 3 of the 7 acknowledged lost", *d)
	}
}
