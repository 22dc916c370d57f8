package ontestbed_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
	"github.com/herdbench/herdbench/triggers"
)

// faultPlan is a short plan over 100 keys whose items expire every 20ms, so
// nearly every request reaches Postgres: a fault there fails it.
func faultPlan(trigger string, arms ...string) plan.Plan {
	cfg := replica.DefaultConfig
	cfg.TTL = herd.Duration(20 * time.Millisecond)
	cfg.QueryCost = herd.Duration(5 * time.Millisecond)
	return plan.Plan{
		Arms: subject.ArmKinds.Arms(arms, replica.FullPatch(cfg)), Trigger: trigger, HotKeys: 100, Keys: 100, Zipf: 1.1, Rate: 200, Clients: 20,
		Timeout: herd.Duration(time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(2500 * time.Millisecond), Seed: 5,
		Triggers: TriggerOptions("outage", "1s", "slowdb_latency", "300ms", "slowdb_for", "1s"),
	}
}

// excessRows counts the rows from fromMS whose attempts exceed the request
// rate by a fifth, and the most attempts in one of them: how widely
// retries spread, and how high.
func excessRows(a result.ArmResult, perRow, fromMS int64) (rows int, peak int64) {
	for _, r := range a.Timeline {
		if r.TMS < fromMS {
			continue // the outage's own waves peak alike in every arm
		}
		if r.Attempts > perRow*6/5 {
			rows++
		}
		peak = max(peak, r.Attempts)
	}
	return rows, peak
}

// runOn runs plans on tg, failing the test that asked on an error.
func runOn(tg *subject.Testbed) func(*testing.T, plan.Plan) *Report {
	return func(t *testing.T, p plan.Plan) *Report {
		t.Helper()
		rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
}

func TestFaultTriggers(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 2)
	run := runOn(tg)

	t.Run("outage: fixed retries come in waves, full jitter spreads them", func(t *testing.T) {
		p := faultPlan("outage", "retry=none", "retry=fixed:200ms:4", "retry=full-jitter:200ms:2s:4")
		// long enough that the fourth retries of the first requests after T
		// land well inside it, however long each failure takes to answer
		p.Triggers.Set("outage", "1.5s")
		rep := run(t, p)
		none, fixed, jitter := rep.Arms[0], rep.Arms[1], rep.Arms[2]
		if none.HTTP.DropRate < 0.2 || none.Retries.Amplification != 1 {
			t.Errorf("no retries: drop rate %.2f, amplification %.2f; want the outage to fail about half the requests after T, one attempt each",
				none.HTTP.DropRate, none.Retries.Amplification)
		}
		// while everything fails, N retries make N+1 attempts of every
		// request: from 1200ms into the outage the waves of all four
		// retries overlap, when failures answer at once. On a busy machine
		// a failure takes longer to answer, each retry leaves that much
		// later, and the fourth of the first requests after T falls past
		// the window (3.67 once, with a docker build beside the test): more
		// than three attempts a request still shows the retries multiplying
		var inOutage, reqs int64
		for _, r := range fixed.Timeline {
			if r.TMS >= 1200 && r.TMS < 1500 {
				inOutage += r.Attempts
				reqs += r.Requests
			}
		}
		// The window's requests are those intended in its rows, and a row
		// the generator sent late holds more attempts than its own (5.63
		// once in CI): the bound on retries is the arm's, at most N+1
		// attempts a request over the arm
		if amp := float64(inOutage) / float64(reqs); amp < 3 || amp > 6.5 {
			t.Errorf("fixed:200ms:4: %.2f attempts per request late in the outage; want about 5 (N+1), more than 3", amp)
		}
		if amp := fixed.Retries.Amplification; amp > 5 {
			t.Errorf("fixed:200ms:4: amplification %.2f over the arm; want at most 5, N+1 attempts a request", amp)
		}
		// once the database is back, the retries still pending arrive: fixed
		// ones together within one interval, fully jittered ones spread over
		// their growing backoffs
		fixedRows, fixedPeak := excessRows(fixed, 20, 1500)
		jitterRows, jitterPeak := excessRows(jitter, 20, 1500)
		t.Logf("late-outage amplification %.2f; after the outage, fixed: %d rows above the rate, peak %d; full jitter: %d rows, peak %d",
			float64(inOutage)/float64(reqs), fixedRows, fixedPeak, jitterRows, jitterPeak)
		// about twice as many rows on a quiet machine (5 and 10 to 12); a
		// busy one stretches both, so: more rows. The peaks, from the
		// outage's end (the outage's own waves, N+1 attempts of every
		// request, about 100 a row, are alike in both), are lower with
		// jitter on a quiet machine; but a peak is one row's count, which a
		// row the generator sent late inflates, and at -p 4 jitter's once
		// topped fixed's, 88 to 82, over 9 rows to 3: logged, not asserted
		if jitterRows <= fixedRows {
			t.Errorf("after the outage, fixed retries over %d rows (peak %d attempts); full jitter over %d rows (peak %d); want fixed concentrated, jitter spread over more rows with a lower peak",
				fixedRows, fixedPeak, jitterRows, jitterPeak)
		}
		if fixed.HTTP.DropRate >= none.HTTP.DropRate || fixed.Retries.Amplification <= 1 {
			t.Errorf("fixed retries: drop rate %.2f (none: %.2f), amplification %.2f; want fewer drops for more attempts",
				fixed.HTTP.DropRate, none.HTTP.DropRate, fixed.Retries.Amplification)
		}
	})

	t.Run("outage: a 10% retry budget holds amplification near 1.1", func(t *testing.T) {
		p := faultPlan("outage", "retry=immediate:3")
		p.Budget, _ = retry.ParseBudget("10%")
		a := run(t, p).Arms[0]
		if a.Retries.Amplification > 1.15 || a.Retries.Amplification <= 1 {
			t.Errorf("immediate:3 under a 10%% budget: amplification %.3f; want above 1 and near 1.1", a.Retries.Amplification)
		}
	})

	t.Run("outage: a stop condition ends the arm and its fault; gates check every arm", func(t *testing.T) {
		p := faultPlan("outage", "none", "breaker")
		p.Triggers.Set("outage", "2s")
		for _, s := range []string{"http.drop_rate > 30%", "http.requests > 100000000"} { // the second never holds here
			g, err := gates.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			p.Abort = append(p.Abort, g)
		}
		for _, s := range []string{"db.queries_total >= 1", "none:http.drop_rate < 1%"} {
			g, err := gates.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			p.Gates = append(p.Gates, g)
		}
		rep := run(t, p)
		none, breaker := rep.Arms[0], rep.Arms[1]
		if none.Aborted == nil {
			t.Fatalf("none under a 2s Postgres outage: not aborted (drop rate %.2f); want the stop condition to hold", none.HTTP.DropRate)
		}
		ab := *none.Aborted
		t.Logf("none aborted at %d ms: %s; trigger %v", ab.AtMS, ab.Reason, none.Trigger.Detail)
		if ab.AtMS < 0 || ab.AtMS > 1500 || ab.Gate != "http.drop_rate > 30%" || !strings.Contains(ab.Reason, "http.drop_rate was 0.") {
			t.Errorf("aborted = %+v; want the drop rate condition, soon after T, with the value it measured", ab)
		}
		// the outage was undone when the arm stopped, not when it was due:
		// the proxy reopened (trigger.ended_ms, from T) at the abort or
		// after it, and was down less than its 2 s. Not down since T: on
		// a busy machine the close itself came 270 ms late once
		down, ended := none.Trigger.Detail.(*triggers.OutageDetail).DownMS, none.Trigger.EndedMS
		if down >= 2000 || ended == nil || *ended < ab.AtMS-200 {
			t.Errorf("outage detail %v, ended at %v ms; want the proxy back up when the arm stopped at %d ms, before its 2000 ms", none.Trigger.Detail, ended, ab.AtMS)
		}
		// its cause ended when the proxy reopened: after the down time it
		// measured, which began at T or later
		endedAfter(t, none, down)
		endedAfter(t, breaker, 2000)
		// no request was sent after the abort
		for _, r := range none.Timeline {
			if r.TMS > ab.AtMS+2*result.RowWidth.Milliseconds() && r.Requests > 0 {
				t.Errorf("timeline row %d ms: %d requests after the abort at %d ms; want none", r.TMS, r.Requests, ab.AtMS)
				break
			}
		}
		if breaker.Aborted != nil || breaker.Trigger.FiredAt == nil {
			t.Errorf("breaker: aborted %+v; want it to run to its end (stale copies keep it under the condition)", breaker.Aborted)
		}
		want := []struct {
			gate, arm string
			pass      bool
		}{{"db.queries_total >= 1", "none", true}, {"db.queries_total >= 1", "breaker", true}, {"none:http.drop_rate < 1%", "none", false}}
		if len(rep.Gates) != len(want) {
			t.Fatalf("gates = %+v; want %d results", rep.Gates, len(want))
		}
		for i, w := range want {
			g := rep.Gates[i]
			if g.Gate != w.gate || g.Arm != w.arm || g.Pass != w.pass || g.Measured == nil {
				t.Errorf("gate result %d = %+v; want %s on %s, pass %v, with its measured value", i, g, w.gate, w.arm, w.pass)
			}
		}
		if m := rep.Gates[2].Measured; m == nil || *m != none.HTTP.DropRate {
			t.Errorf("gate measured %v; want none's http.drop_rate %v, its source", m, none.HTTP.DropRate)
		}
		if rep.Passed() {
			t.Error("Passed() = true with an aborted arm and a failed gate")
		}
	})

	t.Run("conndrop: every replica reconnects", func(t *testing.T) {
		a := run(t, faultPlan("conndrop", "none")).Arms[0]
		endedAfter(t, a, 0) // once the connections were reset
		t.Logf("conndrop: %d new Postgres backends, %d Redis connections after T", a.DB.NewConnections, a.Cache.ConnectionsReceived)
		// each replica's pool (10) stays full, so all of it reconnects
		if a.DB.NewConnections < 2*10 || a.Cache.ConnectionsReceived < 2 {
			t.Errorf("conndrop: %d new Postgres backends, %d Redis connections after T; want replicas x pool size (20) and every replica back on Redis",
				a.DB.NewConnections, a.Cache.ConnectionsReceived)
		}
	})

	t.Run("flush: the whole cache reloads", func(t *testing.T) {
		p := faultPlan("flush", "none")
		for i := range p.Arms {
			p.Arms[i].Knobs = p.Arms[i].Knobs.With("ttl", herd.Duration(time.Minute))
		}
		a := run(t, p).Arms[0]
		endedAfter(t, a, 0) // once the keys were gone, at T
		if n := a.Trigger.Detail.(*triggers.FlushDetail).KeysFlushed; n < 100 || a.DB.Queries < 50 || a.DB.BaselineQPS > 5 {
			t.Errorf("flush: %v keys flushed, %d loads after T, baseline %v q/s; want the cache emptied and reloaded from a quiet baseline",
				a.Trigger.Detail, a.DB.Queries, a.DB.BaselineQPS)
		}
	})

	t.Run("slowdb: replies slow down for a while", func(t *testing.T) {
		a := run(t, faultPlan("slowdb", "none")).Arms[0]
		endedAfter(t, a, a.Trigger.Detail.(*triggers.SlowDBDetail).SlowMS) // the latency removed
		// back after: most rows from 800 ms after the fault, not every one
		// (one request stalled on a busy 2-core machine makes its row's
		// p99: once 416 ms, in CI at -p 4)
		var slow float64
		var after, back int
		for _, r := range a.Timeline {
			switch {
			case r.TMS >= 200 && r.TMS < 800:
				slow = max(slow, r.P99MS)
			case r.TMS >= 1800:
				after++
				if r.P99MS < 300 {
					back++
				}
			}
		}
		if slow < 300 || back*5 < after*4 {
			t.Errorf("slowdb 300ms for 1s: p99 %.0fms during it; %d of %d rows under 300ms after; want at least 300ms during, 80%% of the rows back after", slow, back, after)
		}
	})

	t.Run("burst: 1,000 released clients all answer, its spread measured", func(t *testing.T) {
		p := faultPlan("burst", "none")
		p.Triggers.Set("burst", "1000")
		a := run(t, p).Arms[0]
		if a.Burst == nil || a.Burst.Clients != 1000 || a.Burst.OK != 1000 {
			t.Fatalf("burst of 1,000: %+v; want 1,000 clients released, 1,000 answered", a.Burst)
		}
		endedAfter(t, a, a.Burst.SpreadP99US/1000) // answered after its requests left

		if a.Burst.SpreadP50US <= 0 || a.Burst.SpreadP99US < a.Burst.SpreadP50US || a.Burst.SpreadP99US > int64(time.Second/time.Microsecond) {
			t.Errorf("burst spread p50 %dus, p99 %dus; want 0 < p50 <= p99 < 1s", a.Burst.SpreadP50US, a.Burst.SpreadP99US)
		}
	})

	for _, part := range []string{"redis", "postgres"} {
		t.Run("restart "+part+": the arm completes and recovers", func(t *testing.T) {
			p := faultPlan("restart", "none")
			p.Triggers.Set("restart", part)
			for i := range p.Arms { // items stay cached: a Redis restart empties the cache
				p.Arms[i].Knobs = p.Arms[i].Knobs.With("ttl", herd.Duration(time.Minute))
			}
			p.After = herd.Duration(4 * time.Second) // a restart takes seconds on a busy machine
			a := run(t, p).Arms[0]
			if got := a.Trigger.Detail.(*triggers.RestartDetail).Restarted; len(got) != 1 || got[0] != part {
				t.Errorf("restart %s: detail %v; want %s restarted", part, a.Trigger.Detail, part)
			}
			endedAfter(t, a, a.Trigger.Detail.(*triggers.RestartDetail).TookMS) // serving again
			switch part {
			case "redis": // an empty cache: the warm-up stampede
				if a.DB.Queries < 50 || a.Cache.ConnectionsReceived < 2 {
					t.Errorf("restart redis: %d loads, %d Redis connections after T; want the cache reloaded by reconnected replicas",
						a.DB.Queries, a.Cache.ConnectionsReceived)
				}
			case "postgres": // the cache answers while Postgres is away
				// and the service is not left stuck; whether a whole
				// second in band follows within the 4 s depends on how
				// busy the machine is (a p99 spike of a shared machine
				// holds it out: recovered false once, drop rate 0), so
				// the recovery is logged, not owed
				t.Logf("restart postgres: verdict %s, recovery %v, trigger ended at %v", a.Verdict, ms(a.RecoveryMS), ms(a.Trigger.EndedMS))
				if a.Verdict == result.Metastable || a.HTTP.DropRate > 0.05 {
					t.Errorf("restart postgres: verdict %s, drop rate %.3f; want the cache answering meanwhile, and not stuck",
						a.Verdict, a.HTTP.DropRate)
				}
			}
		})
	}

	t.Run("restart api-2: one replica goes and comes back, the others serve on", func(t *testing.T) {
		p := faultPlan("restart", "none")
		p.Triggers.Set("restart", "api-2")
		p.After = herd.Duration(4 * time.Second)
		a := run(t, p).Arms[0]
		if got := a.Trigger.Detail.(*triggers.RestartDetail).Restarted; len(got) != 1 || got[0] != "api-2" {
			t.Fatalf("restart api-2: detail %v; want api-2 alone restarted", a.Trigger.Detail)
		}
		endedAfter(t, a, a.Trigger.Detail.(*triggers.RestartDetail).TookMS)
		// each replica's own counter, row by row: during its restart api-2
		// answers less than api-1, which serves on (a row with api-2
		// silent, or fewer answers over the restart's rows: a restart
		// quicker than a row leaves no silent one, CI on dfa28e6), and
		// answers again after the trigger's end
		var gap, back bool
		var during [2]int64 // api-1's, api-2's over the restart's rows
		var rows []string
		for _, r := range a.Timeline {
			if r.Replicas == nil {
				continue
			}
			if r.TMS >= 0 && r.TMS < *a.Trigger.EndedMS {
				gap = gap || (r.Replicas["api-2"] == 0 && r.Replicas["api-1"] > 0)
				during[0], during[1] = during[0]+r.Replicas["api-1"], during[1]+r.Replicas["api-2"]
				rows = append(rows, fmt.Sprintf("%d ms: %v", r.TMS, r.Replicas))
			}
			if r.TMS > *a.Trigger.EndedMS && r.Replicas["api-2"] > 0 {
				back = true
			}
		}
		t.Logf("restart api-2, ended at %d ms: rows %s", *a.Trigger.EndedMS, strings.Join(rows, "; "))
		if !(gap || during[1] < during[0]) || !back {
			t.Errorf("the timeline's replicas: during the restart api-2 silent in a row %v, answered %d against api-1's %d; serving after it %v; "+
				"want it silent or behind during, and serving after", gap, during[1], during[0], back)
		}
	})

	t.Run("notify: every replica wakes and reloads; lock reloads once", func(t *testing.T) {
		p := faultPlan("notify", "none", "lock")
		p.HotKeys = 20
		for i := range p.Arms {
			p.Arms[i].Knobs = p.Arms[i].Knobs.With("ttl", herd.Duration(time.Minute))
		}
		rep := run(t, p)
		none, lock := rep.Arms[0], rep.Arms[1]
		endedAfter(t, none, 0) // once published
		if r := none.Trigger.Detail.(*triggers.NotifyDetail).Receivers; r != 2 {
			t.Errorf("notify: %v receivers; want the 2 replicas", r)
		}
		if none.DB.Queries < 40 {
			t.Errorf("notify under none: %d loads after T; want each of 2 replicas to reload each of 20 keys (40)", none.DB.Queries)
		}
		// about one a key: 20 to 25 on a quiet machine; on a busy one a
		// load may outlast its lock and another replica load the key too
		// (28 once, at -p 4), still far below none's two a key
		if lock.DB.Queries < 20 || lock.DB.Queries > 30 || lock.DB.Queries >= none.DB.Queries {
			t.Errorf("notify under lock: %d loads after T (none: %d); want about one per key (20 to 30), fewer than none's", lock.DB.Queries, none.DB.Queries)
		}
	})
}

func TestMitigationsCutAnExpireStampede(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 2)
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(200 * time.Millisecond)
	p := plan.Plan{
		Arms: arm.ClientKinds.Arms([]string{replica.None, replica.SWR, replica.Lease, replica.Local}, replica.FullPatch(cfg)),
		// 600 req/s: each of the 20 hot keys asked about 20 times a second,
		// so none's herd (about 4 loads a key in a 200 ms load's window,
		// more as the pool queues: 95 to 117) is well above the floor a
		// mitigation cannot go under, one load a key (at 300 req/s none
		// loaded 54 to 95 times, and a lease's 30 was a third of it or more)
		Trigger: "expire", HotKeys: 20, Keys: 100, Zipf: 1.1, Rate: 600, Clients: 1,
		Timeout: herd.Duration(2 * time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(1500 * time.Millisecond), Seed: 9,
	}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	none := rep.Arms[0]
	for _, a := range rep.Arms[1:] {
		t.Logf("%s: %d loads after T (none: %d), %d stale and %d local answers", a.Name, a.DB.Queries, none.DB.Queries, a.HTTP.Stale, a.HTTP.Local)
		// about a load a hot key (a lease reloads some whose holder's
		// lease ran out), and at most half of none's herd
		if a.DB.Queries > int64(2*p.HotKeys) || a.DB.Queries*2 > none.DB.Queries {
			t.Errorf("%s: %d loads after T; want at most two a hot key (%d) and half of none's %d", a.Name, a.DB.Queries, 2*p.HotKeys, none.DB.Queries)
		}
		// fewer loads must not come from requests that never got an
		// answer (a lease whose token the warm left held dropped 99%)
		if a.HTTP.DropRate > 0.01 {
			t.Errorf("%s: drop rate %.3f after T (%+v); want the cache answering", a.Name, a.HTTP.DropRate, a.HTTP.Errors)
		}
	}
	// fewer queries must not hide older answers: they are counted
	if swr, local := rep.Arms[1], rep.Arms[3]; swr.HTTP.Stale == 0 || none.HTTP.Stale != 0 || local.HTTP.Local == 0 || none.HTTP.Local != 0 {
		t.Errorf("stale answers: swr %d, none %d; local answers: local %d, none %d; want swr's and local's counted, none's zero",
			swr.HTTP.Stale, none.HTTP.Stale, local.HTTP.Local, none.HTTP.Local)
	}
}

func TestAdaptiveThrottlingUnderOverload(t *testing.T) {
	t.Parallel()
	tg := startTestbed(t, 2)
	cfg := replica.DefaultConfig
	// the backend: every request a load (1ms TTL), at most about 2 x 20/s
	cfg.Strategy = "ratelimit"
	cfg.TTL = herd.Duration(time.Millisecond)
	cfg.QueryCost = herd.Duration(time.Millisecond)
	p := plan.Plan{
		Arms:    arm.ClientKinds.Arms([]string{"retry=none", "throttle=2"}, replica.FullPatch(cfg).With("rate_limit", 20).With("rate_burst", 5)),
		Trigger: "expire", HotKeys: 10, Keys: 100, Zipf: 1.1, Rate: 200, Clients: 20,
		Timeout: herd.Duration(time.Second), Warmup: herd.Duration(3 * time.Second),
		Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second), Seed: 11,
	}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	ratio := func(a result.ArmResult) float64 { return float64(a.HTTP.Errors.Shed) / float64(max(a.HTTP.OK, 1)) }
	plain, throttled := rep.Arms[0], rep.Arms[1]
	t.Logf("without throttling: %d accepted, %d rejected by the backend; K=2: %d accepted, %d rejected, %d refused by the clients",
		plain.HTTP.OK, plain.HTTP.Errors.Shed, throttled.HTTP.OK, throttled.HTTP.Errors.Shed, throttled.HTTP.Errors.Throttled)
	if ratio(plain) < 2.5 {
		t.Errorf("without throttling the backend rejects %.2f per accepted request; want an overload (2.5 or more)", ratio(plain))
	}
	// K=2: the clients send about 2 per accepted one, so the backend
	// rejects about one per request it accepts
	if r := ratio(throttled); r < 0.5 || r > 1.6 || throttled.HTTP.Errors.Throttled == 0 {
		t.Errorf("adaptive throttling K=2: the backend rejects %.2f per accepted request, clients refused %d; want about 1 and some refused",
			r, throttled.HTTP.Errors.Throttled)
	}
}

// endedAfter checks when arm a's trigger said its cause was over: at
// least atLeastMS after T (the trigger's own measure of how long its cause
// lasted, from a start at T or later), and before the arm's drain could
// have begun (T + after, and the few seconds a fault's undo may take).
func endedAfter(t *testing.T, a result.ArmResult, atLeastMS int64) {
	t.Helper()
	e := a.Trigger.EndedMS
	if e == nil || *e < atLeastMS || *e > 10_000 {
		t.Errorf("%s: trigger %s ended_ms %v; want %d or more (its own measure of the cause), within the arm", a.Name, a.Trigger.Name, e, atLeastMS)
	}
}

// ms prints a figure in milliseconds that may be null.
func ms(v *int64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%d ms", *v)
}
