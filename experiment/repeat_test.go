package experiment

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/triggers"
)

// run is a synthetic run of arm a: its DB queries, p99, recovery (nil:
// not recovered) and verdict, and a timeline that names it.
func synthRun(queries int64, p99 float64, recovery *int64, verdict string) result.ArmResult {
	return result.ArmResult{Name: "a", DB: &result.DB{Queries: queries, PeakQPS: float64(queries) / 2}, HTTP: result.HTTP{P99MS: p99},
		RecoveryMS: recovery, Verdict: verdict, Timeline: []result.Row{{TMS: queries}},
		Trigger: result.TriggerResult{Name: "expire", Detail: &triggers.ExpireDetail{Keys: int(queries)}}}
}

func at(v int64) *int64 { return &v }

func num(v float64) *float64 { return &v }

func fmtNum(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

func TestAggregateMedians(t *testing.T) {
	for _, c := range []struct {
		name        string
		runs        []result.ArmResult
		queries     int64
		p99         float64
		recovery    *int64
		min, max    *float64 // db.queries
		recMax      *float64 // recovery_ms
		shown       int      // the representative run, 0-based
		wantVerdict string
	}{
		{"odd: the middle", []result.ArmResult{synthRun(430, 30, at(900), result.Recovered), synthRun(398, 10, at(500), result.Recovered), synthRun(412, 20, at(700), result.Recovered)},
			412, 20, at(700), num(398), num(430), num(900), 2, result.Recovered},
		{"even: the mean of the middle two, a count rounded half up", []result.ArmResult{synthRun(400, 10, at(500), result.Recovered), synthRun(405, 15, at(600), result.Recovered)},
			403, 12.5, at(550), num(400), num(405), num(600), 1, result.Recovered}, // 405 is the closer to 403
		{"a run without a value counts above every value", []result.ArmResult{synthRun(400, 10, nil, result.Metastable), synthRun(405, 15, at(600), result.Recovered), synthRun(410, 20, nil, result.Metastable)},
			405, 15, nil, num(400), num(410), nil, 1, result.Metastable},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := result.Aggregate(c.runs)
			if err != nil {
				t.Fatal(err)
			}
			if got.DB.Queries != c.queries || got.HTTP.P99MS != c.p99 || fmtMS(got.RecoveryMS) != fmtMS(c.recovery) {
				t.Errorf("medians: db.queries %d, p99 %g, recovery %s; want %d, %g, %s", got.DB.Queries, got.HTTP.P99MS, fmtMS(got.RecoveryMS), c.queries, c.p99, fmtMS(c.recovery))
			}
			s, ok := got.SpreadOf("db.queries")
			if !ok || fmtNum(s.Min) != fmtNum(c.min) || fmtNum(s.Max) != fmtNum(c.max) {
				t.Errorf("SpreadOf(db.queries) = %s–%s, %v; want %s–%s", fmtNum(s.Min), fmtNum(s.Max), ok, fmtNum(c.min), fmtNum(c.max))
			}
			if r, _ := got.SpreadOf("recovery_ms"); fmtNum(r.Max) != fmtNum(c.recMax) {
				t.Errorf("SpreadOf(recovery_ms).Max = %s; want %s", fmtNum(r.Max), fmtNum(c.recMax))
			}
			if len(got.Runs) != len(c.runs) {
				t.Fatalf("%d runs kept; want %d", len(got.Runs), len(c.runs))
			}
			for i, r := range got.Runs {
				if r.DB.Queries != c.runs[i].DB.Queries || r.Representative != (i == c.shown) {
					t.Errorf("runs[%d]: db.queries %d, representative %v; want %d, %v", i, r.DB.Queries, r.Representative, c.runs[i].DB.Queries, i == c.shown)
				}
			}
			// the words are the representative's: its timeline and detail
			want := c.runs[c.shown]
			if len(got.Timeline) != 1 || got.Timeline[0].TMS != want.Timeline[0].TMS {
				t.Errorf("timeline %v; want the representative's %v", got.Timeline, want.Timeline)
			}
			if d, ok := got.Trigger.Detail.(*triggers.ExpireDetail); !ok {
				t.Errorf("trigger.detail is %T; want *triggers.ExpireDetail", got.Trigger.Detail)
			} else if mid := c.runs; d.Keys != int(c.queries) && len(mid)%2 == 1 {
				t.Errorf("trigger.detail.keys %d; want the median %d", d.Keys, c.queries)
			}
			if got.Verdict != c.wantVerdict {
				t.Errorf("verdict %s; want %s", got.Verdict, c.wantVerdict)
			}
		})
	}
}

func TestAggregateOneRunIsThatRun(t *testing.T) {
	r := synthRun(400, 10, at(5), result.Recovered)
	got, err := result.Aggregate([]result.ArmResult{r})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(r)
	if string(a) != string(b) {
		t.Errorf("Aggregate(one run) = %s; want the run itself, %s", a, b)
	}
}

// Every number a gate reads is the median: none is left at the
// representative's own value.
func TestAggregateEveryFigureIsTheMedian(t *testing.T) {
	runs := []result.ArmResult{synthRun(100, 1, at(1), result.Recovered), synthRun(300, 3, at(3), result.Recovered), synthRun(200, 2, at(2), result.Recovered)}
	runs[0].Retries.Attempts, runs[1].Retries.Attempts, runs[2].Retries.Attempts = 7, 9, 8
	got, err := result.Aggregate(runs)
	if err != nil {
		t.Fatal(err)
	}
	nums, _ := gates.Numbers(got)
	for _, s := range got.Spread {
		v := nums[s.Path]
		if v == nil || s.Min == nil || s.Max == nil {
			continue
		}
		if *v < *s.Min || *v > *s.Max {
			t.Errorf("%s = %g; outside its spread %g–%g", s.Path, *v, *s.Min, *s.Max)
		}
	}
	if got.Retries.Attempts != 8 || got.DB.PeakQPS != 100 {
		t.Errorf("retries.attempts %d, db.peak_qps %g; want 8, 100", got.Retries.Attempts, got.DB.PeakQPS)
	}
}

func TestMostCommonVerdict(t *testing.T) {
	for _, c := range []struct {
		verdicts []string
		want     string
	}{
		{[]string{result.Recovered, result.Recovered, result.Metastable}, result.Recovered},
		{[]string{result.Recovered, result.Metastable}, result.Metastable},
		{[]string{result.Recovered, result.Degraded}, result.Degraded},
		{[]string{result.Overloaded, result.Recovered}, result.Overloaded},
		{[]string{result.Degraded, result.Metastable, result.Overloaded, result.Recovered}, result.Metastable},
		{[]string{result.Degraded, result.Overloaded, result.Overloaded, result.Degraded}, result.Degraded},
	} {
		runs := make([]result.ArmResult, len(c.verdicts))
		for i, v := range c.verdicts {
			runs[i].Verdict = v
		}
		if got := result.MostCommon(runs); got != c.want {
			t.Errorf("mostCommon(%v) = %s; want %s", c.verdicts, got, c.want)
		}
	}
}

func TestSpreadOverlaps(t *testing.T) {
	for _, c := range []struct {
		a, b result.Spread
		want bool
	}{
		{result.Spread{Min: num(1), Max: num(3)}, result.Spread{Min: num(2), Max: num(4)}, true},
		{result.Spread{Min: num(1), Max: num(3)}, result.Spread{Min: num(3), Max: num(4)}, true},
		{result.Spread{Min: num(1), Max: num(2)}, result.Spread{Min: num(3), Max: num(4)}, false},
		{result.Spread{Min: num(5), Max: num(6)}, result.Spread{Min: num(3), Max: num(4)}, false},
		{result.Spread{Min: num(5), Max: nil}, result.Spread{Min: num(3), Max: num(6)}, true}, // nil: above every value
		{result.Spread{Min: num(5), Max: nil}, result.Spread{Min: num(3), Max: num(4)}, false},
		{result.Spread{}, result.Spread{Min: num(3), Max: num(4)}, false}, // no run had a value
	} {
		if got := c.a.Overlaps(c.b); got != c.want {
			t.Errorf("%s–%s Overlaps %s–%s = %v; want %v", fmtNum(c.a.Min), fmtNum(c.a.Max), fmtNum(c.b.Min), fmtNum(c.b.Max), got, c.want)
		}
	}
}

// Gates read a repeated arm's median, and say so.
func TestGatesReadTheMedian(t *testing.T) {
	a, err := result.Aggregate([]result.ArmResult{synthRun(100, 1, at(1), result.Recovered), synthRun(300, 3, at(3), result.Recovered), synthRun(200, 2, at(2), result.Recovered)})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := gates.Parse("db.queries < 150")
	rs := result.CheckGates([]gates.Gate{g}, []result.ArmResult{a})
	if len(rs) != 1 || rs[0].Pass || rs[0].Measured == nil || *rs[0].Measured != 200 || rs[0].Of() != "median of 3 runs" {
		t.Fatalf("CheckGates = %+v; want db.queries 200 failing, the median of 3 runs", rs)
	}
}

// A plan run once leaves repeat out of its JSON, so results and goldens
// from before it stay as they were; a repeated one says it.
func TestRepeatInThePlanJSON(t *testing.T) {
	for _, c := range []struct {
		r    plan.Repeat
		want string
	}{{0, ""}, {1, ""}, {3, `"repeat":3`}} {
		b, err := json.Marshal(plan.Plan{Repeat: c.r})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); c.want == "" && strings.Contains(got, `"repeat"`) || !strings.Contains(got, c.want) {
			t.Errorf("json.Marshal(Plan{Repeat: %d}) = %s; want %s", c.r, got, cmp.Or(c.want, "no repeat"))
		}
		if n := c.r.N(); n != max(int(c.r), 1) {
			t.Errorf("Repeat(%d).N() = %d; want %d", c.r, n, max(int(c.r), 1))
		}
	}
}

// A run without a timeline (null in its results) leaves the
// representative's as it is: only numbers are medians. (Through JSON, a
// null in any run replaced the representative's array.)
func TestAggregateKeepsTheRepresentativesTimeline(t *testing.T) {
	runs := []result.ArmResult{synthRun(430, 30, at(900), result.Recovered), synthRun(398, 10, at(500), result.Recovered), synthRun(412, 20, at(700), result.Recovered)}
	runs[0].Timeline = nil
	got, err := result.Aggregate(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Timeline) != 1 || got.Timeline[0].TMS != 412 {
		t.Errorf("timeline %v; want the representative's, [{t_ms 412}]", got.Timeline)
	}
}
