package experiment

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
)

// --escape's forms: on, on:LIMIT, SHARES, SHARES:LIMIT, off; every bad
// value is refused with the forms it accepts.
func TestParseEscape(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // its String; "" for off
	}{
		{"on", "75%,50%,25%,10%:10s"},
		{"on:20s", "75%,50%,25%,10%:20s"},
		{"60%,30%", "60%,30%:10s"},
		{"0.6, 0.3:15s", "60%,30%:15s"},
		{"off", ""},
	} {
		e, err := verdict.ParseEscape(c.in)
		got := ""
		if e != nil {
			got = e.String()
		}
		if err != nil || got != c.want {
			t.Errorf("ParseEscape(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "yes", "50%,75%", "50%,50%", "100%", "0%", "-10%", "NaN", "on:1s", "on:5m", "on:soon",
		"90%,80%,70%,60%,50%,40%,30%,20%,10%,5%,1%"} {
		if _, err := verdict.ParseEscape(in); err == nil || !strings.Contains(err.Error(), "accepted: on") {
			t.Errorf("ParseEscape(%q) = %v; want an error naming the accepted forms", in, err)
		}
	}
	p := plan.Plan{Escape: &verdict.Escape{Shares: []float64{0.5, math.NaN()}, Limit: herd.Duration(10 * time.Second)}}
	if errs := p.EscapeProblems(); len(errs) != 1 || errs[0].Field != "escape" {
		t.Errorf("escapeProblems of a NaN share = %v; want one, on escape", errs)
	}
}

// The escape's rule on synthetic rows: 200 req/s offered before T (20 a
// row) and all answered at 10 DB q/s and 5 ms, stuck from T, and stepped
// down at 6 s to 75% (15 a row), which stays stuck for its 2 s limit, and
// at 9 s to 50% (10 a row), back in band from 9.5 s: a hold of its rows
// answers 90% of its share of the baseline's goodput, less one, within
// the baseline's p99 and DB q/s bands. The escape load is 100 req/s, half
// the rate that tipped it.
func TestEscapeSteps(t *testing.T) {
	base := result.Row{Requests: 20, OK: 20, Attempts: 20, DBQPS: 10, P99MS: 5}
	stuck := func(n int64) result.Row {
		return result.Row{Requests: n, OK: 1, Attempts: 5 * n, DBQPS: 3, P99MS: 1000}
	}
	back := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 8, P99MS: 5}
	at := func(ms int64) *int64 { return &ms }
	pattern := func(backAt int64) func(int64) result.Row {
		return func(tms int64) result.Row {
			switch {
			case tms < 6000:
				return stuck(20)
			case tms < 9000:
				return stuck(15)
			case tms < backAt:
				return stuck(10)
			}
			return back
		}
	}
	for _, c := range []struct {
		name   string
		end    int64 // the arm's load, from T
		backAt int64
		reads  []string
		rec    []*int64
		rps    *float64
	}{
		{"back at 50%", 11000, 9500, []string{result.StepStuck, result.StepRecovered}, []*int64{nil, at(500)}, ptr(100.0)},
		{"stuck at every step", 12000, 1 << 40, []string{result.StepStuck, result.StepStuck}, []*int64{nil, nil}, nil},
		{"the arm's window ended mid-step", 10000, 1 << 40, []string{result.StepStuck, result.StepUnfinished}, []*int64{nil, nil}, nil},
	} {
		rows := synthetic(base, c.end, pattern(c.backAt))
		ended := int64(500)
		res := &result.ArmResult{Timeline: rows, DB: &result.DB{BaselineQPS: 10}, Trigger: result.TriggerResult{EndedMS: &ended}, BaselineP99: 5}
		res.Windows = result.WindowsOf(rows, &ended)
		x := &escaping{plan: verdict.Escape{Shares: []float64{0.75, 0.5}, Limit: herd.Duration(2 * time.Second)}, rate: 200,
			begun: []result.EscapeStep{{Share: 0.75, RPS: 150, StartMS: 6000}, {Share: 0.5, RPS: 100, StartMS: 9000}}}
		got := (&ending{escape: x}).escapeResult(res)
		if len(got.Steps) != 2 || !sameFloat(got.RPS, c.rps) || got.StartMS == nil || *got.StartMS != 6000 {
			t.Fatalf("%s: escape %+v; want 2 steps from 6000 ms, rps %v", c.name, got, fmtF(c.rps))
		}
		for i, s := range got.Steps {
			if s.Read != c.reads[i] || !sameMS(s.RecoveryMS, c.rec[i]) {
				t.Errorf("%s: step %d (%g req/s) read %s, recovery %s; want %s, %s", c.name, i, s.RPS, s.Read, fmtMS(s.RecoveryMS), c.reads[i], fmtMS(c.rec[i]))
			}
		}
		if c.rps != nil && (got.Share == nil || *got.Share != 0.5) {
			t.Errorf("%s: share %v; want 0.5, 100 of 200 req/s", c.name, fmtF(got.Share))
		}
		if s := got.Steps[0]; s.EndMS != 9000 || s.JudgedToMS != 8000 || s.OfferedRPS != 150 || s.GoodputRPS != 10 {
			t.Errorf("%s: first step ends %d, judged to %d, offered %g, goodput %g; want 9000, 8000 (its 2 s limit), 150, 10",
				c.name, s.EndMS, s.JudgedToMS, s.OfferedRPS, s.GoodputRPS)
		}
	}
}

// A step begins at a row's edge at least an interval of the rate so far
// and a row ahead of now, a nanosecond before the edge, and none begins
// at or past the schedule's end or once the shares are used up.
func TestEscapeNextStep(t *testing.T) {
	tt := time.Unix(1000, 0)
	x := &escaping{plan: verdict.Escape{Shares: []float64{0.5, 0.01}, Limit: herd.Duration(2 * time.Second)}, rate: 200}
	if !x.next(tt.Add(6050*time.Millisecond), tt, 20*time.Second) {
		t.Fatal("first step refused")
	}
	if got := x.begun[0]; got.StartMS != 6200 || got.RPS != 100 {
		t.Errorf("first step at %d ms, %g req/s; want 6200 (the edge after 6050 + 5 ms + a row), 100", got.StartMS, got.RPS)
	}
	// at 2 req/s, an interval is 500 ms: the edge is 600 ms ahead at least
	if !x.next(tt.Add(9000*time.Millisecond), tt, 20*time.Second) {
		t.Fatal("second step refused")
	}
	if got := x.begun[1]; got.StartMS != 9200 || got.RPS != 2 {
		t.Errorf("second step at %d ms, %g req/s; want 9200, 2", got.StartMS, got.RPS)
	}
	steps := x.steps.List()
	if len(steps) != 2 || !steps[0].At.Equal(tt.Add(6200*time.Millisecond-time.Nanosecond)) || steps[1].Rate != 2 {
		t.Errorf("load steps %+v; want at 6.2 s less a nanosecond to 100, then 2", steps)
	}
	if x.next(tt.Add(12*time.Second), tt, 20*time.Second) {
		t.Error("a third step of two; want none")
	}
	y := &escaping{plan: verdict.DefaultEscape, rate: 200}
	if y.next(tt.Add(19950*time.Millisecond), tt, 20*time.Second) {
		t.Error("a step past the schedule's end; want none")
	}
}

func ptr[T any](v T) *T { return &v }

func sameFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Over repeated runs, a run that found no escape load counts below every
// rate stepped to: the median of none, 5 and 10 req/s is 5; of none, none
// and 5 is none; the spread's min is then null.
func TestEscapeMedians(t *testing.T) {
	run := func(rps *float64) result.ArmResult {
		r := synthRun(100, 1, nil, result.Metastable)
		start := int64(7000)
		r.Escape = &result.EscapeResult{FromRPS: 20, StartMS: &start, RPS: rps, Steps: []result.EscapeStep{}}
		if rps != nil {
			r.Escape.Share = num(*rps / 20)
		}
		return r
	}
	for _, c := range []struct {
		rps  []*float64
		want *float64
	}{{[]*float64{nil, num(10), num(5)}, num(5)}, {[]*float64{num(5), nil, nil}, nil}, {[]*float64{num(10), num(5), num(10)}, num(10)}} {
		var runs []result.ArmResult
		for _, v := range c.rps {
			runs = append(runs, run(v))
		}
		got, err := result.Aggregate(runs)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFloat(got.Escape.RPS, c.want) {
			t.Errorf("median escape.rps of %v = %s; want %s", fmtNums(c.rps), fmtNum(got.Escape.RPS), fmtNum(c.want))
		}
		if s, ok := got.SpreadOf("escape.rps"); c.rps[1] == nil && (!ok || s.Min != nil) {
			t.Errorf("spread of escape.rps over %v = %+v; want min null", fmtNums(c.rps), s)
		}
	}
}

func fmtNums(vs []*float64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmtNum(v)
	}
	return out
}

// The live escape, on rows as they are answered: the first metastable
// verdict begins the first step (its rows are the verdict's), a step
// whose rows reach the limit without coming back makes way for the next,
// and a step back in band ends the arm, its load cut at the next row's
// edge.
func TestEscapeStepsDownLive(t *testing.T) {
	tt := time.Unix(1000, 0)
	base := result.Row{Requests: 20, OK: 20, Attempts: 20, DBQPS: 10, P99MS: 5}
	stuck := func(n int64) result.Row {
		return result.Row{Requests: n, OK: 1, Attempts: 5 * n, DBQPS: 3, P99MS: 1000}
	}
	back := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 8, P99MS: 5}
	// stuck at the arm's rate, at 75% from 6.2 s, at 50% from 9.2 s, and
	// back from 9.5 s
	rows := synthetic(base, 20000, func(tms int64) result.Row {
		switch {
		case tms < 6200:
			return stuck(20)
		case tms < 9200:
			return stuck(15)
		case tms < 9500:
			return stuck(10)
		}
		return back
	})
	ended := int64(500)
	resTo := func(to int64) *result.ArmResult {
		n := 0
		for n < len(rows) && rows[n].TMS < to {
			n++
		}
		res := &result.ArmResult{Timeline: rows[:n], DB: &result.DB{BaselineQPS: 10}, Trigger: result.TriggerResult{EndedMS: &ended}, BaselineP99: 5, Verdict: result.Metastable}
		res.Windows = result.WindowsOf(rows[:n], &ended)
		return res
	}
	a := &armRun{p: plan.Plan{After: herd.Duration(60 * time.Second)}}
	e := &ending{escape: &escaping{plan: verdict.Escape{Shares: []float64{0.75, 0.5, 0.25}, Limit: herd.Duration(2 * time.Second)}, rate: 200}}
	x := e.escape
	for _, c := range []struct {
		now, answered time.Duration
		over          bool
		steps         int
	}{
		{6 * time.Second, 5 * time.Second, false, 1},          // metastable on the rows to T+5 s: 75% from T+6.2 s
		{7 * time.Second, 6500 * time.Millisecond, false, 1},  // judging the step's first rows
		{9 * time.Second, 8200 * time.Millisecond, false, 2},  // its 2 s are over, stuck: 50% from T+9.2 s
		{11 * time.Second, 10 * time.Second, false, 2},        // back from 9.5 s, but its hold not whole yet
		{12 * time.Second, 10600 * time.Millisecond, true, 2}, // a hold in band: over
	} {
		over := e.stepDown(x, a, resTo(c.answered.Milliseconds()), tt.Add(c.now), tt, c.answered)
		if over != c.over || len(x.begun) != c.steps {
			t.Fatalf("at T+%s (rows to T+%s): over %t, %d steps; want %t, %d", c.now, c.answered, over, len(x.begun), c.over, c.steps)
		}
	}
	if e.decided != 5*time.Second || x.begun[0].StartMS != 6200 || x.begun[1].StartMS != 9200 {
		t.Errorf("decided on rows to %s, steps from %d and %d ms; want 5s, 6200, 9200", e.decided, x.begun[0].StartMS, x.begun[1].StartMS)
	}
	if at, ok := e.cut.When(); !ok || !at.Equal(tt.Add(12100*time.Millisecond-time.Nanosecond)) {
		t.Errorf("cut at %v (%t); want the row's edge after T+12 s, less a nanosecond", at.Sub(tt), ok)
	}
	// the arm's verdict is the rows' it was decided on: judged on the
	// whole timeline, its last hold at half the rate is offered less than
	// the baseline's work, and reads recovering, not what held it down
	whole := resTo(12100)
	e.judgeOn(whole)
	alone := resTo(12100)
	verdict.Judge(alone, 5)
	if whole.Verdict != result.Metastable || alone.Verdict != result.Recovering {
		t.Errorf("verdict on the rows decided %s, on the whole timeline %s; want metastable, recovering", whole.Verdict, alone.Verdict)
	}
}

// FuzzParseEscape: --escape's parser never panics, and what it accepts
// reads back the same from its own String.
func FuzzParseEscape(f *testing.F) {
	for _, s := range []string{"on", "off", "on:20s", "75%,50%", "0.6,0.3:15s", "50%,75%", ":", "%", "1e-400%,", "on:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := verdict.ParseEscape(s)
		if err != nil || e == nil {
			return
		}
		again, err := verdict.ParseEscape(e.String())
		if err != nil || again == nil || again.String() != e.String() {
			t.Errorf("ParseEscape(%q).String() = %q reads back as %v, %v", s, e.String(), again, err)
		}
	})
}
