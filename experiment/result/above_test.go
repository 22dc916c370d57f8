package result

import "testing"

// How long the database stayed above its baseline's work is read a whole
// second of rows from T at a time: a second is above when its mean DB q/s
// is 1.25 times the baseline's and 2 q/s more; the figure ends with the
// last such second, wherever the seconds between fell.
func TestAboveBaseline(t *testing.T) {
	// 10 s from T, 1 s before it at 10 q/s; qps(s) is the DB q/s of second s
	rows := func(after int64, qps func(s int64) float64) []Row {
		var out []Row
		for tms := int64(-1000); tms < after; tms += 100 {
			r := Row{TMS: tms, DBQPS: 10}
			if tms >= 0 {
				r.DBQPS = qps(tms / 1000)
			}
			out = append(out, r)
		}
		return out
	}
	for _, c := range []struct {
		name     string
		after    int64
		baseline float64
		qps      func(s int64) float64
		want     int64
	}{
		{"back at once", 10_000, 10, func(int64) float64 { return 10 }, 0},
		{"a herd of 3 s", 10_000, 10, func(s int64) float64 { return map[bool]float64{true: 200, false: 10}[s < 3] }, 3000},
		{"1.4 times for 11 s, within the verdict's band", 12_000, 10, func(s int64) float64 { return map[bool]float64{true: 14, false: 10}[s < 11] }, 11_000},
		{"1.2 times: noise", 10_000, 10, func(int64) float64 { return 12 }, 0},
		{"a second above after two back", 10_000, 10, func(s int64) float64 { return map[bool]float64{true: 30, false: 10}[s == 0 || s == 3] }, 4000},
		{"above to the arm's end, a short last second", 9_500, 10, func(int64) float64 { return 40 }, 9500},
		{"a baseline of none: 2 q/s is above", 5000, 0, func(s int64) float64 { return map[bool]float64{true: 2, false: 1}[s < 2] }, 2000},
	} {
		r := rows(c.after, c.qps)
		if c.baseline == 0 {
			for i := range r[:10] {
				r[i].DBQPS = 0
			}
		}
		if got := AboveBaseline(r, c.baseline); got != c.want {
			t.Errorf("%s: AboveBaseline(rows, %v) = %d ms; want %d", c.name, c.baseline, got, c.want)
		}
	}
}
