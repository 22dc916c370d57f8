package experiment

import (
	"slices"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
)

// The loop's figures on a synthetic retry storm: a second before T of 10
// requests a row, one attempt each, 30 DB q/s, 3 loads a row and no
// failure; the fault ends at T+500 ms, and from it the clients send five
// attempts a request, Postgres completes 3 q/s, no load finishes, 20 fail
// a row, the pools open 5 connections and give up 15 waits a row. A rate
// that was 0 counts as one event over the before window, so its ratio is
// a lower bound; one that stayed 0 is x1. The figure furthest from its
// baseline, either way, holds the service: here the failed loads.
func TestLoopFigures(t *testing.T) {
	before := result.Row{Requests: 10, Attempts: 10, DBQPS: 30, Counts: map[string]int64{"loads": 3}, Misses: 3}
	storm := result.Row{Requests: 10, Attempts: 50, DBQPS: 3, Counts: map[string]int64{"load_errors": 20, "new_conns": 5, "canceled_acquires": 15}, Misses: 40}
	rows := synthetic(before, 3000, until(500, result.Row{Requests: 10, Attempts: 10}, storm))
	ended := int64(500)
	l := verdict.LoopOf(rows, &ended, verdict.Sources{DB: true, Cache: true, Replicas: true})
	for _, c := range []struct {
		name string
		got  *result.LoopFigure
		want result.LoopFigure
	}{
		{"attempts_per_request", l.AttemptsPerRequest, result.LoopFigure{Before: 1, After: 5, Ratio: 5}},
		{"db_qps", l.DBQPS, result.LoopFigure{Before: 30, After: 3, Ratio: 0.1}},
		{"loads_rps", l.Counts["loads"], result.LoopFigure{Before: 30, After: 0, Ratio: 0.03}},             // 0 after: one event a second, the floor
		{"load_errors_rps", l.Counts["load_errors"], result.LoopFigure{Before: 0, After: 200, Ratio: 200}}, // from 0: at least x200
		{"new_conns_rps", l.Counts["new_conns"], result.LoopFigure{Before: 0, After: 50, Ratio: 50}},       //
		{"canceled_acquires_rps", l.Counts["canceled_acquires"], result.LoopFigure{Before: 0, After: 150, Ratio: 150}},
		{"misses_rps", l.MissesRPS, result.LoopFigure{Before: 30, After: 400, Ratio: 13.33}},
	} {
		if c.got == nil || *c.got != c.want {
			t.Errorf("loop.%s = %+v; want %+v", c.name, c.got, c.want)
		}
	}
	if got, want := result.HeldBy(l), "load errors x200"; got != want {
		t.Errorf("heldBy = %q; want %q", got, want)
	}
	quiet := verdict.LoopOf(synthetic(before, 3000, func(int64) result.Row { return before }), &ended, verdict.Sources{DB: true, Replicas: true})
	if quiet.Counts["new_conns"].Ratio != 1 || quiet.MissesRPS != nil || result.HeldBy(quiet) != "" {
		t.Errorf("an arm whose figures stayed as before: new_conns_rps %+v, misses_rps %+v (no cache observed), held by %q; want x1, null, none",
			quiet.Counts["new_conns"], quiet.MissesRPS, result.HeldBy(quiet))
	}
	if l := verdict.LoopOf(rows, &ended, verdict.Sources{}); l.DBQPS != nil || l.Counts["loads"] != nil || l.AttemptsPerRequest == nil {
		t.Errorf("a service without a database or replicas herdbench reads: %+v; want the clients' attempts alone", l)
	}
}

// held by is a stuck arm's: a metastable one names its loop, a recovered
// or recovering one none.
func TestHeldByOnlyWhenStuck(t *testing.T) {
	good := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
	useless := result.Row{Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000}
	ended := int64(500)
	for _, c := range []struct {
		rows []result.Row
		want string
	}{
		{synthetic(good, 6000, until(500, useless, useless)), "attempts x5"},
		{synthetic(good, 6000, until(1000, useless, good)), ""},
		{synthetic(good, 3000, until(500, useless, useless)), ""},
	} {
		res := judged(c.rows, &ended, nil)
		res.Loop = verdict.LoopOf(res.Timeline, &ended, verdict.Sources{DB: true})
		if res.Verdict == result.Metastable {
			res.Loop.HeldBy = result.HeldBy(res.Loop)
		}
		if res.Loop.HeldBy != c.want {
			t.Errorf("%s arm: held by %q; want %q", res.Verdict, res.Loop.HeldBy, c.want)
		}
	}
}

// A row's replica figures are the growth of the replicas' counters over
// the samples in it; a sum that went down had a replica restart, and
// counts from zero; a sample that could not read them loses nothing.
func TestTimelineTakesTheReplicasCounters(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	p := plan.Plan{Before: herd.Duration(100 * time.Millisecond), After: herd.Duration(200 * time.Millisecond)}
	at := func(ms int, s observe.Servers) observe.Sample {
		return observe.Sample{At: T.Add(time.Duration(ms) * time.Millisecond), Servers: &s}
	}
	samples := []observe.Sample{
		at(-195, observe.Servers{Counts: map[string]int64{"loads": 10, "load_errors": 1, "new_conns": 30, "canceled_acquires": 0}}),
		at(-95, observe.Servers{Counts: map[string]int64{"loads": 12, "load_errors": 1, "new_conns": 30, "canceled_acquires": 0}}),
		at(5, observe.Servers{Counts: map[string]int64{"loads": 12, "load_errors": 9, "new_conns": 34, "canceled_acquires": 6}}),
		{At: T.Add(55 * time.Millisecond)}, // the replicas did not answer: their growth goes to the next sample that read them
		at(105, observe.Servers{Counts: map[string]int64{"loads": 1, "load_errors": 2, "new_conns": 3, "canceled_acquires": 1}}), // restarted
	}
	rows, _ := timeline(p, T, samples, NewRecorder(T, 100*time.Millisecond, 200*time.Millisecond, false))
	var got [][4]int64
	for _, r := range rows {
		got = append(got, [4]int64{r.Counts["loads"], r.Counts["load_errors"], r.Counts["new_conns"], r.Counts["canceled_acquires"]})
	}
	want := [][4]int64{{2, 0, 0, 0}, {0, 8, 4, 6}, {1, 2, 3, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("timeline rows' loads, load errors, new conns, canceled waits = %v; want %v", got, want)
	}
}

// An arm of several runs is held by what its medians say, when its most
// common verdict is metastable: the representative run's own word may be
// another run's verdict, or none.
func TestHeldByOfRepeats(t *testing.T) {
	run := func(attempts, errs float64, verdict, held string) result.ArmResult {
		r := synthRun(100, 5, nil, verdict)
		r.Loop = &result.Loop{AttemptsPerRequest: &result.LoopFigure{Before: 1, After: attempts, Ratio: attempts},
			Counts: map[string]*result.LoopFigure{"load_errors": {Before: 0, After: errs, Ratio: errs}}, HeldBy: held}
		return r
	}
	for _, c := range []struct {
		runs []result.ArmResult
		want string
	}{
		{[]result.ArmResult{run(5, 2, result.Metastable, "attempts x5"), run(4.8, 10, result.Metastable, "load errors x10"), run(1, 1, result.Recovered, "")}, "attempts x4.8"},
		{[]result.ArmResult{run(5, 2, result.Metastable, "attempts x5"), run(1, 1, result.Recovered, ""), run(1, 1, result.Recovered, "")}, ""},
	} {
		out, err := result.Aggregate(c.runs)
		if err != nil {
			t.Fatal(err)
		}
		if out.Loop == nil || out.Loop.HeldBy != c.want {
			t.Errorf("%s over %d runs: held by %+v; want %q", out.Verdict, len(c.runs), out.Loop, c.want)
		}
	}
}
