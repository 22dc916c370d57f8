package experiment

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
)

// returnSamples are HAProxy's readings every 100 ms, in the middle of
// each row from -1 s to 6 s, of two servers given weight 100 that share
// 20 attempts a row: a1 is DOWN from T until its return at row back
// (from T), whose reading first lists it UP with the weight weightAt
// gives it (ms since its return); from the row after, it takes
// weight/(weight+100) of each row's attempts, rounded; a2 takes the rest.
func returnSamples(t0 time.Time, back int, weightAt func(ms int) int64) []observe.Sample {
	return flapSamples(t0, [][2]int{{0, back}}, weightAt)
}

// flapSamples are returnSamples with a1 DOWN in each span of rows [from,
// back) from T, its weight counted from the last span's back.
func flapSamples(t0 time.Time, downs [][2]int, weightAt func(ms int) int64) []observe.Sample {
	var out []observe.Sample
	var a1, a2 int64
	for i := -10; i < 60; i++ {
		r1 := observe.LBRow{Name: "a1", Weight: 100, UserWeight: 100, Status: "UP"}
		n, back := int64(10), -1
		for _, d := range downs {
			if i >= d[0] {
				back = d[1]
			}
		}
		switch {
		case back < 0:
		case i < back:
			r1.Status, n = "DOWN", 0
		case i == back: // its reading came as it went UP: what grew since was a2's
			r1.Weight, n = weightAt(0), 0
		default:
			r1.Weight = weightAt((i - back) * 100)
			n = (20*r1.Weight + (r1.Weight+100)/2) / (r1.Weight + 100)
		}
		a1, a2 = a1+n, a2+20-n
		r1.Sessions = a1
		r2 := observe.LBRow{Name: "a2", Sessions: a2, Weight: 100, UserWeight: 100, Status: "UP"}
		out = append(out, observe.Sample{At: t0.Add(time.Duration(i)*result.RowWidth + 50*time.Millisecond),
			LB: &observe.LBStats{Servers: []observe.LBRow{r1, r2}}})
	}
	return out
}

// A returning server's figures from the rows: the row of the reading that
// first lists it UP, its attempts in the second from there, its share by
// the weights it was given, and the first second it took 90% of it. A
// step takes its share at once; slowstart's ramp (weights 7, 32, 57, 82,
// 100 a second apart, as HAProxy 2.6 ramps weight 100 over slowstart 4s)
// a fraction of it, and its share once its weight is 82 (82/182 of the
// attempts is 0.901 of its half). The rows carry each server's weight, 0
// while it is down.
func TestAReturnIsAStepOrARamp(t *testing.T) {
	t0 := time.Unix(1000, 0)
	step := func(int) int64 { return 100 }
	ramp := func(ms int) int64 { return min(7+25*int64(ms/1000), 100) }
	ms := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		name      string
		back      int
		weightAt  func(int) int64
		wantFirst float64
		wantFull  *int64
	}{
		// its return's row none, then 10 of 20 a row: 90 in its first
		// second, 90% of its half of 200
		{"step", 10, step, 90, ms(0)},
		// then 1 of 20 a row (7/107 of them); 9 a row from 3 s (82/182),
		// 7 a row before (57/157)
		{"ramp", 10, ramp, 9, ms(3000)},
		// back in the arm's last half second: its first second is those
		// five rows, and no whole second reaches its share
		{"back at the end", 55, step, 80, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			samples := returnSamples(t0, c.back, c.weightAt)
			end := *samples[len(samples)-1].LB
			rows := rowsOf(lbRows(samples, t0), -10, 60)
			if w := rows[10+c.back-1].LBWeights["a1"]; w != 0 {
				t.Errorf("a1's weight on the row before its return %d; want 0: it was DOWN", w)
			}
			if w, want := rows[10+c.back].LBWeights["a1"], c.weightAt(0); w != want {
				t.Errorf("a1's weight on its return's row %d; want HAProxy's %d", w, want)
			}
			lb := &result.LoadBalancer{Servers: result.LBServers{"a1": {}, "a2": {}}}
			returns(lb, rows, end)
			got := lb.Servers["a1"].Return
			if got == nil {
				t.Fatal("a1: no return; want one")
			}
			full := func(p *int64) any {
				if p == nil {
					return nil
				}
				return *p
			}
			if got.BackMS != int64(c.back)*100 || got.FirstSecondRPS != c.wantFirst || got.Share != 0.5 || full(got.FullShareMS) != full(c.wantFull) {
				t.Errorf("a1's return: back_ms %d, first_second_rps %g, share %g, full_share_ms %v; want %d, %g, 0.5, %v",
					got.BackMS, got.FirstSecondRPS, got.Share, full(got.FullShareMS), c.back*100, c.wantFirst, full(c.wantFull))
			}
			if r := lb.Servers["a2"].Return; r != nil {
				t.Errorf("a2 was never down, and returns %+v; want none", *r)
			}
		})
	}
}

// rowsOf are the rows from index first to last (exclusive), each with its
// start from T, as the timeline holds them.
func rowsOf(m map[int64]*result.Row, first, last int64) []result.Row {
	var rows []result.Row
	for i := first; i < last; i++ {
		r := result.Row{TMS: i * result.RowWidth.Milliseconds()}
		if x := m[i]; x != nil {
			r.LBSent, r.LBServers, r.LBWeights = x.LBSent, x.LBServers, x.LBWeights
		}
		rows = append(rows, r)
	}
	return rows
}

// A server that flaps returns more than once, and each return is
// reported, in order, by the rule of the first: a1 is DOWN from T to
// row 10, UP, DOWN again from row 25 to row 35 and UP to the end, each
// time at its whole weight at once. Its first return is return, as it
// was when only the first was reported.
func TestEveryReturnOfAFlappingServer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	step := func(int) int64 { return 100 }
	samples := flapSamples(t0, [][2]int{{0, 10}, {25, 35}}, step)
	rows := rowsOf(lbRows(samples, t0), -10, 60)
	lb := &result.LoadBalancer{Servers: result.LBServers{"a1": {}, "a2": {}}}
	returns(lb, rows, *samples[len(samples)-1].LB)
	a1 := lb.Servers["a1"]
	var got []string
	for _, r := range a1.Returns {
		got = append(got, fmt.Sprintf("%d ms, %g/s, share %g, full %v", r.BackMS, r.FirstSecondRPS, r.Share, *r.FullShareMS))
	}
	// each: its return's row none, then 10 of 20 a row
	want := []string{"1000 ms, 90/s, share 0.5, full 0", "3500 ms, 90/s, share 0.5, full 0"}
	if !slices.Equal(got, want) {
		t.Errorf("a1's returns %q; want %q", got, want)
	}
	if a1.Return == nil || !reflect.DeepEqual(*a1.Return, a1.Returns[0]) {
		t.Errorf("a1's return %+v; want its first, %+v", a1.Return, a1.Returns[0])
	}
	if r := lb.Servers["a2"]; r.Return != nil || r.Returns != nil {
		t.Errorf("a2 was never down, and returns %+v, %+v; want none", r.Return, r.Returns)
	}
}
