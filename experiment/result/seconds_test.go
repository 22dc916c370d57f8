package result

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/gates"
)

// secondsFixture is a real run on the local testbed, as a service of two
// request classes (items, the herd's, and likes), arms baseline and
// hedge=50ms, the expire trigger at 300 req/s, before 1s and after 8s,
// with gates over seconds on the arm's figures and the classes'
// (docs/ci.md, "Gates over seconds").
const secondsFixture = "../../reporters/testdata/seconds.json"

// fixtureRun is what the test reads of a results file.
type fixtureRun struct {
	Arms  []ArmResult    `json:"arms"`
	Gates []gates.Result `json:"gates"`
}

// Every second a gate over seconds judged in the recorded run is ten of
// the timeline's rows, from the first at or after the trigger's end plus
// the settle to the last whole second: its start is its first row's, its
// value is made again here from those rows alone, and whether it held,
// how many held and the share measured follow from them. Checked again
// on the arms, the gates give what the run stored.
func TestSecondsAreTheTimelinesRows(t *testing.T) {
	run := readFixture(t, secondsFixture)
	judged := 0
	for _, r := range run.Gates {
		if r.Seconds == nil {
			continue
		}
		a := armNamed(t, run.Arms, r.Arm)
		settled := int64(0)
		if a.Trigger.EndedMS != nil {
			settled = max(*a.Trigger.EndedMS, 0)
		}
		settled += *a.SettleMS // the run wrote it
		rows := rowsOf(t, a, r.Path)
		var after []Row
		for _, x := range rows {
			if x.TMS >= settled {
				after = append(after, x)
			}
		}
		s := r.Seconds
		if s.Count != len(after)/10 || len(s.Windows) != s.Count || s.Count == 0 {
			t.Fatalf("%s on %s: %d seconds; want %d, the whole tens of the %d rows from T+%dms", r.Gate, r.Arm, s.Count, len(after)/10, len(after), settled)
		}
		held := 0
		for i, w := range s.Windows {
			ten := after[10*i : 10*i+10]
			want := valueOf(t, a, r.Path, ten)
			if w.StartMS != ten[0].TMS || !sameValue(w.Value, want) {
				t.Errorf("%s on %s: second %d = start %d, value %v; its rows (t_ms %d..%d) give %d, %v", r.Gate, r.Arm, i, w.StartMS, show(w.Value), ten[0].TMS, ten[9].TMS, ten[0].TMS, show(want))
			}
			g := gates.Gate{Op: r.Op, Value: r.Value}
			if w.Held != (want != nil && g.Holds(*want)) {
				t.Errorf("%s on %s: second at %d held = %v; its value %v %s %g says otherwise", r.Gate, r.Arm, w.StartMS, w.Held, show(want), r.Op, r.Value)
			}
			if w.Held {
				held++
			}
		}
		share := float64(held) / float64(s.Count)
		if s.Held != held || r.Measured == nil || *r.Measured != share || r.Pass != (share >= s.Share) {
			t.Errorf("%s on %s: held %d, measured %v, pass %v; the seconds give %d, %g, %v", r.Gate, r.Arm, s.Held, show(r.Measured), r.Pass, held, share, share >= s.Share)
		}
		judged += s.Count
	}
	if judged < 20 {
		t.Fatalf("the fixture's gates over seconds judged %d seconds; want the recorded run's, some 40", judged)
	}
	var gs []gates.Gate
	for _, r := range run.Gates {
		if !containsExpr(gs, r.Gate) {
			g, err := gates.Parse(r.Gate)
			if err != nil {
				t.Fatal(err)
			}
			gs = append(gs, g)
		}
	}
	if again := CheckGates(gs, run.Arms); !reflect.DeepEqual(again, run.Gates) {
		got, _ := json.Marshal(again)
		stored, _ := json.Marshal(run.Gates)
		t.Errorf("CheckGates on the fixture's arms differs from the gates the run stored:\n%.3000s\nstored:\n%.3000s", got, stored)
	}
}

// valueOf is the figure path names over one second's rows, made here
// apart from SecondsOf: the highest p99 of the rows that sent a request,
// a sum, (requests - ok) / requests, the mean of db_qps.
func valueOf(t *testing.T, a ArmResult, path string, rows []Row) *float64 {
	t.Helper()
	var requests, ok, unsent, qps float64
	var p99 *float64
	for _, r := range rows {
		requests, ok, unsent, qps = requests+float64(r.Requests), ok+float64(r.OK), unsent+float64(r.Unsent), qps+r.DBQPS
		if r.Requests-r.Unsent > 0 && (p99 == nil || r.P99MS > *p99) {
			p := r.P99MS
			p99 = &p
		}
	}
	last := path[strings.LastIndex(path, ".")+1:]
	switch {
	case last == "p99_ms":
		return p99
	case path == "http.requests" || last == "requests" && strings.HasPrefix(path, "requests."):
		return &requests
	case last == "ok", last == "goodput_rps":
		return &ok
	case last == "unsent":
		return &unsent
	case path == "http.drop_rate":
		d := math.Round((requests-ok)/requests*10000) / 10000
		return &d
	case path == "db.peak_qps" && a.DB != nil:
		m := math.Round(qps/10*100) / 100
		return &m
	}
	t.Fatalf("the test makes no %s over a second", path)
	return nil
}

// rowsOf are the rows path's figure is made of: the arm's timeline, or
// its class's.
func rowsOf(t *testing.T, a ArmResult, path string) []Row {
	t.Helper()
	rest, ok := strings.CutPrefix(path, "requests.")
	if !ok {
		return a.Timeline
	}
	c := a.Requests[rest[:strings.Index(rest, ".")]]
	if c == nil {
		t.Fatalf("arm %s has no class of %s", a.Name, path)
	}
	var out []Row
	for _, x := range c.Timeline {
		out = append(out, Row{TMS: x.TMS, Requests: x.Requests, OK: x.OK, Unsent: x.Unsent, P99MS: x.P99MS})
	}
	return out
}

func readFixture(t *testing.T, path string) fixtureRun {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run fixtureRun
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	return run
}

func armNamed(t *testing.T, arms []ArmResult, name string) ArmResult {
	t.Helper()
	for _, a := range arms {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no arm %s", name)
	return ArmResult{}
}

func containsExpr(gs []gates.Gate, expr string) bool {
	for _, g := range gs {
		if g.Expr == expr {
			return true
		}
	}
	return false
}

func sameValue(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(v *float64) any {
	if v == nil {
		return "null"
	}
	return *v
}

// The seconds are whole and consecutive: a second whose rows have a gap
// is left out, and so are the rows left at the end; they begin at the
// first row at or after the settle's end.
func TestWholeSeconds(t *testing.T) {
	var rows []Row
	for tms := int64(-500); tms < 4000; tms += 100 {
		if tms != 2300 { // a gap: the second from 2100 is not whole
			rows = append(rows, Row{TMS: tms})
		}
	}
	var starts []int64
	for _, s := range WholeSeconds(rows, 2050) {
		starts = append(starts, s[0].TMS)
		if len(s) != RowsPerSecond {
			t.Errorf("a second of %d rows; want %d", len(s), RowsPerSecond)
		}
	}
	// from 2100: 2100..3000 has the gap (its ten rows end at 3100), 3200..4000 is 8 rows
	if want := []int64(nil); !reflect.DeepEqual(starts, want) {
		t.Errorf("seconds from T+2050ms with a gap at 2300 start at %v; want %v", starts, want)
	}
	starts = nil
	for _, s := range WholeSeconds(rows, 0) {
		starts = append(starts, s[0].TMS)
	}
	if want := []int64{0, 1000}; !reflect.DeepEqual(starts, want) {
		t.Errorf("seconds from T start at %v; want %v (2000..3000 has the gap, 3000.. too few rows)", starts, want)
	}
	if got := WholeSeconds(rows, 4000); got != nil {
		t.Errorf("seconds from past the last row = %v; want none", got)
	}
}

// Of a repeated arm, every run's seconds count, each from its own
// settle and marked with its run; the settle is the trigger's end (T
// when before it) plus settle_ms, MetastableSettle without one.
func TestSecondsOfEveryRun(t *testing.T) {
	rowsFrom := func(p99 float64) []Row {
		var rows []Row
		for tms := int64(-1000); tms < 5000; tms += 100 {
			rows = append(rows, Row{TMS: tms, Requests: 10, P99MS: p99})
		}
		return rows
	}
	at := func(ms int64) *int64 { return &ms }
	runs := []ArmResult{
		{Timeline: rowsFrom(100), Trigger: TriggerResult{EndedMS: at(-40)}},                      // settled at 2000: 2000, 3000, 4000
		{Timeline: rowsFrom(300), Trigger: TriggerResult{EndedMS: at(1500)}, SettleMS: at(1000)}, // at 2500: 2500, 3500
		{Timeline: rowsFrom(200), SettleMS: at(3500)},                                            // at 3500: 3500
	}
	got := SecondsOf(ArmResult{Runs: runs}, "http.p99_ms")
	type sec struct {
		run   int
		start int64
		p99   float64
	}
	var seen []sec
	for _, w := range got {
		seen = append(seen, sec{w.Run, w.StartMS, *w.Value})
	}
	want := []sec{{1, 2000, 100}, {1, 3000, 100}, {1, 4000, 100}, {2, 2500, 300}, {2, 3500, 300}, {3, 3500, 200}}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("seconds of three runs = %v; want %v", seen, want)
	}
	if got := SecondsOf(runs[0], "http.p50_ms"); got != nil {
		t.Errorf("seconds of http.p50_ms = %v; want none: the rows keep no p50", got)
	}
}
