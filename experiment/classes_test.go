package experiment

import (
	"math"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// Each class's figures are its own records': a herd class stuck after T
// reads metastable and dropped, while the bystander beside it, answered as
// before, reads recovered at once; the classes add up to the arm.
func TestEachClassIsCountedAndJudgedOnItsOwn(t *testing.T) {
	T := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	before, after := 2*time.Second, 6*time.Second
	r := NewRecorder(T, before, after, false)
	r.FileClasses(2)
	for at := -before; at < after; at += 5 * time.Millisecond { // 200 req/s a class
		hr := load.Record{Intended: T.Add(at), Latency: 10 * time.Millisecond, Outcome: load.OK, Class: 0}
		if at >= 0 { // from T the herd's class is stuck: every request times out
			hr.Latency, hr.Outcome = time.Second, load.Timeout
		}
		r.Add(hr)
		r.Add(load.Record{Intended: T.Add(at), Latency: 12 * time.Millisecond, Outcome: load.OK, Class: 1})
	}
	p := plan.Plan{Before: herd.Duration(before), After: herd.Duration(after)}
	rows, hists := timeline(p, T, nil, r)
	zero := int64(0)
	res := &result.ArmResult{Timeline: rows, RowHists: hists, Trigger: result.TriggerResult{EndedMS: &zero}}
	classes := result.ClassesOf([]targets.Class{{Name: "items", Weight: 1, Herd: true}, {Name: "checkout", Weight: 1}})
	got := r.requestFigures(classes, res)
	items, checkout := got["items"], got["checkout"]
	if items == nil || checkout == nil {
		t.Fatalf("figures %v; want items and checkout", got)
	}
	if h := r.http(); items.Requests+checkout.Requests != h.Requests || items.Requests != 1200 {
		t.Errorf("classes' requests %d + %d; want the arm's %d, 1,200 each (6 s at 200/s)", items.Requests, checkout.Requests, h.Requests)
	}
	if !items.Herd || items.OK != 0 || items.DropRate != 1 || items.Errors.Timeout != 1200 || items.Verdict != result.Metastable {
		t.Errorf("items = herd %v, ok %d, drop %v, timeouts %d, %s; want the herd's class stuck: none ok, metastable",
			items.Herd, items.OK, items.DropRate, items.Errors.Timeout, items.Verdict)
	}
	if checkout.Herd || checkout.OK != 1200 || checkout.DropRate != 0 || math.Abs(checkout.P99MS-12) > 0.1 || checkout.BaselineP99MS != checkout.P99MS ||
		checkout.GoodputRPS != 200 || checkout.Verdict != result.Recovered || checkout.RecoveryMS == nil || *checkout.RecoveryMS != 0 {
		t.Errorf("checkout = %+v; want the bystander untouched: all ok, p99 12 ms as before T, 200/s, recovered at once", *checkout)
	}
	if n := len(checkout.Timeline); n != len(rows) || checkout.Timeline[0].TMS != -2000 || checkout.Timeline[0].Requests != 20 {
		t.Errorf("checkout's timeline: %d rows from %+v; want the arm's %d rows, 20 requests each", n, checkout.Timeline[0], len(rows))
	}
}

// A repeated arm's class figures are their medians over the runs, and its
// verdict the most common, as the arm's are; the runs keep their own.
func TestARepeatedArmsClassesTakeTheirMedians(t *testing.T) {
	run := func(requests int64, verdict string) result.ArmResult {
		return result.ArmResult{Name: "none", Verdict: result.Recovered, Requests: map[string]*result.RequestFigures{
			"checkout": {Requests: requests, Verdict: verdict}}}
	}
	got, err := result.Aggregate([]result.ArmResult{run(100, result.Metastable), run(300, result.Recovered), run(200, result.Metastable)})
	if err != nil {
		t.Fatal(err)
	}
	c := got.Requests["checkout"]
	if c == nil || c.Requests != 200 || c.Verdict != result.Metastable {
		t.Fatalf("checkout = %+v; want the median 200 requests, metastable (two runs of three)", c)
	}
	if got.Runs[1].Requests["checkout"].Verdict != result.Recovered {
		t.Errorf("run 2's checkout = %s; want its own, recovered", got.Runs[1].Requests["checkout"].Verdict)
	}
}
