package experiment_test

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// The loop's replica figures are the replicas' own counters, row by row:
// on the testbed, an arm whose every load falls inside its timeline (the
// cache warm before T, 5 hot keys expired at T and reloaded in 50 ms, each
// load running on when its client gives up after 200 ms) has the rows'
// loads add up to api.loads and to the queries Postgres completed, and its
// failures and pool figures to theirs, and recovers. An arm whose loads
// die with their requests, each slower than the client's timeout (400 ms
// queries), can never fill the hot keys again: a look-aside cache stuck
// cold by construction. It shows its failed loads and new connections in
// the rows, at most what the replicas counted over the whole arm, its
// drain included; past its settle time (the replicas' 5 s db-timeout) it
// is metastable, held by the figure of its loop furthest from its
// baseline.
func TestLoopFromTheReplicasCounters(t *testing.T) {
	tg := startTestbed(t, 1)
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(50 * time.Millisecond)
	canceled := cfg
	canceled.QueryCost, canceled.AbandonedLoad = herd.Duration(400*time.Millisecond), replica.AbandonCanceled
	arms := arm.ClientKinds.Arms([]string{replica.None}, replica.FullPatch(cfg))
	cut := arm.ClientKinds.Arms([]string{replica.None}, replica.FullPatch(canceled))
	cut[0].Name = "canceled"
	p := plan.Plan{
		Arms: append(arms, cut...), Trigger: "expire", HotKeys: 5, Keys: 50, Zipf: 1.1, Rate: 100, Clients: 2,
		Timeout: herd.Duration(200 * time.Millisecond), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(7 * time.Second), Seed: 5,
	}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	sum := func(a result.ArmResult) (s [4]int64) {
		for _, r := range a.Timeline {
			s[0], s[1], s[2], s[3] = s[0]+r.Counts["loads"], s[1]+r.Counts["load_errors"], s[2]+r.Counts["new_conns"], s[3]+r.Counts["canceled_acquires"]
		}
		return s
	}
	quiet, cold := rep.Arms[0], rep.Arms[1]
	got, c := sum(quiet), quiet.API
	if want := [4]int64{c.Value("loads"), c.Value("load_errors"), c.Value("db_new_conns"), c.Value("db_canceled_acquires")}; got != want || got[0] == 0 || c.Value("loads") != quiet.DB.QueriesTotal {
		t.Errorf("arm none: rows' loads, load errors, new conns, canceled waits %v; want the replicas' %v, loads above 0 and equal to db.queries_total %d",
			got, want, quiet.DB.QueriesTotal)
	}
	got, c = sum(cold), cold.API
	if got[1] == 0 || got[2] == 0 || got[1] > c.Value("load_errors") || got[2] > c.Value("db_new_conns") || got[3] > c.Value("db_canceled_acquires") {
		t.Errorf("arm canceled: rows' load errors, new conns, canceled waits %v; want above 0 (failures, connections) and at most the replicas' %d, %d, %d",
			got[1:], c.Value("load_errors"), c.Value("db_new_conns"), c.Value("db_canceled_acquires"))
	}
	if l := cold.Loop; l == nil || l.Counts["load_errors"] == nil || l.Counts["load_errors"].After <= 0 || l.Counts["new_conns"].After <= 0 {
		t.Errorf("arm canceled: loop %+v; want failed loads and new connections after the trigger", l)
	}
	if (quiet.Verdict != result.Recovered && quiet.Verdict != result.Relapsed) || cold.Verdict != result.Metastable || cold.Loop.HeldBy == "" || cold.Loop.HeldBy != HeldBy(cold.Loop) || quiet.Loop.HeldBy != "" {
		t.Errorf("verdicts %s (held by %q), %s (held by %q); want recovered (none; relapsed on a late second), metastable held by its loop's furthest figure %q",
			quiet.Verdict, quiet.Loop.HeldBy, cold.Verdict, cold.Loop.HeldBy, HeldBy(cold.Loop))
	}
	heldToTheEnd(t, quiet)
	aboveBaselineFromRows(t, quiet)
	aboveBaselineFromRows(t, cold)
	if cold.RelapseFromTMS != nil || cold.RecoveryMS != nil {
		t.Errorf("arm canceled: recovery %v, relapse %v from T; want neither: never back in band", deref(cold.RecoveryMS), deref(cold.RelapseFromTMS))
	}
	t.Logf("none: %v of %+v; canceled: %v of %+v, %s, depth %v, trend %v, held by %q", sum(quiet), quiet.API, sum(cold), cold.API,
		cold.Verdict, FmtF(cold.Depth), FmtF(cold.Trend), cold.Loop.HeldBy)
}

// heldToTheEnd checks a recovered or relapsed arm's verdict against its
// own rows, hold by hold, through the band's first-hold reading
// (Recovered): a recovered arm has no stretch of holds out of band as
// long as a relapse from the row of its recovery to its last (the
// verdict's rule: a shorter blip stays recovered); a relapsed arm's last
// hold is out of band; the
// hold that ends at a relapse is out of band, and one before it was in.
// On a busy machine a late second (a p99 over the band) is a relapse too,
// so the quiet arm may read either; the rows say which.
func heldToTheEnd(t *testing.T, a result.ArmResult) {
	t.Helper()
	b, _, ok := verdict.BandOfResult(&a)
	rows, hists, hold := a.Timeline, a.RowHists, int(verdict.RecoveryHold/result.RowWidth)
	in := func(i int) bool { _, ok := b.Recovered(rows[i:i+hold], hists[i:i+hold], rows[i].TMS); return ok }
	switch {
	case !ok || len(rows) < hold:
		t.Fatalf("arm %s: no band or hold to judge", a.Name)
	case a.Verdict == result.Recovered:
		// the rule: from its recovery to the end, no holds out of band
		// over RelapseSpan in a row (a blip of a busy machine may take
		// fewer out: 14 in a row once, 1.4 s)
		run, out := int(verdict.RelapseSpan/result.RowWidth), 0
		for i := range rows {
			if rows[i].TMS < *a.RecoveryFromTMS || i+hold > len(rows) {
				continue
			}
			if out = out + 1; in(i) {
				out = 0
			}
			if out >= run {
				t.Errorf("arm %s, recovered at T+%d ms: %d holds out of band in a row to T+%d ms; want fewer than %d (a relapse)", a.Name, *a.RecoveryFromTMS, out, rows[i].TMS, run)
				break
			}
		}
	case a.Verdict == result.Relapsed:
		if in(len(rows) - hold) {
			t.Errorf("arm %s: relapsed, its last hold within band; want it out", a.Name)
		}
	default:
		t.Fatalf("arm %s: verdict %s; want recovered, or relapsed on a late second", a.Name, a.Verdict)
	}
	if r := a.RelapseFromTMS; r != nil {
		i := slices.IndexFunc(rows, func(x result.Row) bool { return x.TMS == *r }) - hold + 1
		back := false
		for j := 0; j < i; j++ {
			back = back || (rows[j].TMS >= 0 && in(j))
		}
		if i < 1 || in(i) || !back {
			t.Errorf("arm %s: relapse at T+%d ms; want the hold that ends there out of band, and one before it in", a.Name, *r)
		}
	}
	t.Logf("arm %s: %s, recovery from T %v ms, relapse %v", a.Name, a.Verdict, deref(a.RecoveryFromTMS), deref(a.RelapseFromTMS))
}

// aboveBaselineFromRows checks db.above_baseline_ms against a's rows: the
// second from T that ends there averaged at least the threshold over the
// baseline's DB q/s, and every whole second after it less.
func aboveBaselineFromRows(t *testing.T, a result.ArmResult) {
	t.Helper()
	if a.DB == nil || a.DB.AboveBaselineMS == nil {
		t.Fatalf("arm %s: db %+v; want db.above_baseline_ms", a.Name, a.DB)
	}
	limit := max(a.DB.BaselineQPS*result.AboveBaselineRatio, a.DB.BaselineQPS+result.AboveBaselineFloor)
	ms, seconds := *a.DB.AboveBaselineMS, map[int64][]float64{}
	for _, r := range a.Timeline {
		if r.TMS >= 0 {
			seconds[r.TMS/1000] = append(seconds[r.TMS/1000], r.DBQPS)
		}
	}
	for s, qps := range seconds {
		var sum float64
		for _, q := range qps {
			sum += q
		}
		above, end := sum/float64(len(qps)) >= limit, s*1000+int64(len(qps))*result.RowWidth.Milliseconds()
		if end == ms && !above || end > ms && above {
			t.Errorf("arm %s: db.above_baseline_ms %d; the second from T+%d s averaged %.1f q/s against the baseline's %.1f (above from %.1f)",
				a.Name, ms, s, sum/float64(len(qps)), a.DB.BaselineQPS, limit)
		}
	}
	t.Logf("arm %s: above its baseline's %.1f db q/s for %d ms from T", a.Name, a.DB.BaselineQPS, ms)
}
