package result

import "time"

// A second of the timeline is above the baseline's work when its DB q/s is
// at least AboveBaselineRatio times the before window's, and at least
// AboveBaselineFloor q/s more: a count of a few queries a second moves by
// one or two on its own.
const (
	AboveBaselineRatio = 1.25
	AboveBaselineFloor = 2.0
)

// AboveBaseline is how long from T the database stayed above its
// baseline's work (db.above_baseline_ms): the end of the last second from
// T, in whole seconds of rows (the arm's last may be shorter), whose mean
// DB q/s is above baseline (the before window's, db.baseline_qps); 0 when
// none was, the whole after window when its last second was.
func AboveBaseline(rows []Row, baseline float64) int64 {
	per := int(time.Second / RowWidth)
	limit := max(baseline*AboveBaselineRatio, baseline+AboveBaselineFloor)
	var until int64
	for i := range rows {
		if rows[i].TMS < 0 || rows[i].TMS%int64(time.Second/time.Millisecond) != 0 {
			continue
		}
		second := rows[i:min(i+per, len(rows))]
		var sum float64
		for _, r := range second {
			sum += r.DBQPS
		}
		if sum/float64(len(second)) >= limit {
			until = second[len(second)-1].TMS + RowWidth.Milliseconds()
		}
	}
	return until
}
