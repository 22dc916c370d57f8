package reporters

import (
	"strconv"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// classesTable is each request class's figures under each arm (a target's
// requests:): the herd's class and the bystanders beside it, each from
// its own records, each with its own verdict, so the herd's blast radius
// reads off one table. Nil for a target of one request.
func classesTable(rep *experiment.Report) ([]string, [][]string) {
	classes := rep.Environment.Requests
	if len(classes) == 0 {
		return nil, nil
	}
	head := []string{"arm", "class", "share", "requests", "ok", "drop", "p50", "p99", "p99 before T", "goodput/s", "verdict"}
	var rows [][]string
	for _, a := range rep.Arms {
		for _, c := range classes {
			f := a.Requests[c.Name]
			if f == nil {
				continue
			}
			name := c.Name
			if c.Herd {
				name += " (herd)"
			}
			rows = append(rows, []string{a.Name, name, pct(c.Share), thousands(f.Requests), thousands(f.OK), pct(f.DropRate),
				msString(f.P50MS), msString(f.P99MS), msString(f.BaselineP99MS), strconv.FormatFloat(f.GoodputRPS, 'f', 1, 64),
				classVerdict(f)})
		}
	}
	return head, rows
}

// classVerdict is a class's verdict, with its recovery when it recovered.
func classVerdict(f *result.RequestFigures) string {
	if f.Verdict == result.Recovered && f.RecoveryMS != nil {
		return f.Verdict + " in " + msString(float64(*f.RecoveryMS))
	}
	return f.Verdict
}
