package reporters

import (
	"fmt"
	"strconv"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// escapeCell is the summary's escape column for a (--escape): the escape
// load and its share of the rate that tipped the arm, "none" when no step
// brought the service back, "not stuck" when the arm never stepped down
// ("no room" when it was stuck too late in its after window for a step).
func escapeCell(a result.ArmResult) string {
	if a.Escape == nil {
		return "-"
	}
	if a.Escape.RPS == nil {
		return unstepped(a)
	}
	return rps(*a.Escape.RPS) + " (" + pct(*a.Escape.Share) + ")"
}

// unstepped is why a has no escape load: none, not stuck or no room.
func unstepped(a result.ArmResult) string {
	switch {
	case a.Escape.StartMS != nil:
		return "none"
	case a.Verdict == result.Metastable:
		return "no room"
	}
	return "not stuck"
}

// escapeTable is a row per step of every arm that stepped down: its share
// and rate, when it ran, and what its rows read.
func escapeTable(rep *experiment.Report) (head []string, rows [][]string) {
	for _, a := range rep.Arms {
		if a.Escape == nil {
			continue
		}
		for _, s := range a.Escape.Steps {
			back := "-"
			if s.RecoveryMS != nil {
				back = msString(float64(*s.RecoveryMS))
			}
			rows = append(rows, []string{a.Name, pct(s.Share), rps(s.RPS), tPlus(s.StartMS), tPlus(s.EndMS),
				rps(s.OfferedRPS), rps(s.GoodputRPS), strconv.FormatFloat(s.DBQPS, 'f', 0, 64), s.Read, back})
		}
	}
	if rows == nil {
		return nil, nil
	}
	return []string{"escape", "share", "rate", "from", "to", "offered", "goodput", "db q/s", "read", "back after"}, rows
}

// rps is a rate a second: "150/s", "2.5/s".
func rps(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "/s" }

// tPlus is an instant from T: "T+12.3s".
func tPlus(ms int64) string { return fmt.Sprintf("T%+.1fs", float64(ms)/1000) }

// escapeProperty is v, a's escape load or its share, as a JUnit
// property, or why there is none (unstepped).
func escapeProperty(a result.ArmResult, v *float64) string {
	if v == nil {
		return unstepped(a)
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}
