package reporters

import (
	"fmt"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/triggers"
)

// writesTable is a write herd, one row per arm: the burst's and the
// steady writes' acknowledgements, what the writes cost Postgres and the
// queue, the lag to applied, and what never arrived (LOST); with a
// fan-out (write_fanout), the feed rows the applied likes wrote. Empty for
// other triggers.
func writesTable(rep *experiment.Report) (head []string, rows [][]string) {
	var feed []string
	fanout := false
	for _, a := range rep.Arms {
		d, ok := a.Trigger.Detail.(*triggers.WritesDetail) // typed, also read back from results
		if !ok {
			continue
		}
		lost := "0"
		if d.Lost > 0 {
			lost = thousands(d.Lost) + " LOST"
		}
		steady, steadyP99 := "-", "-"
		w := a.Writes
		if w == nil {
			w = &result.WriteFigures{}
		}
		if s := w.Steady; s != nil {
			steady, steadyP99 = fmt.Sprintf("%s of %s", thousands(s.HTTP.OK), thousands(s.HTTP.Requests)), msString(s.HTTP.P99MS)
		}
		lag50, lag99 := "-", "-"
		if l := w.Lag; l != nil && l.Count > 0 {
			lag50, lag99 = msString(l.P50MS), msString(l.P99MS)
		}
		rows = append(rows, []string{a.Name, configOf(a.Config, nil).WriteStrategy,
			fmt.Sprintf("%s of %s", thousands(int64(d.Acked)), thousands(int64(d.Sent))), msString(d.P99MS), steady, steadyP99,
			thousands(w.Statements), thousands(w.Rows), thousands(w.LockWaitsPeak), thousands(w.QueueDepthPeak),
			lag50, lag99, thousands(d.Applied), lost})
		feed = append(feed, fmt.Sprintf("%s (%d per like)", thousands(d.FeedRows), d.Followers))
		fanout = fanout || d.Followers > 0
	}
	if rows == nil {
		return nil, nil
	}
	head = []string{"writes", "strategy", "burst acked", "burst p99", "steady ok from T", "steady p99",
		"write stmts", "rows", "lock waits", "queue peak", "lag p50", "lag p99", "applied", "lost"}
	if fanout {
		head = append(head, "feed rows")
		for i := range rows {
			rows[i] = append(rows[i], feed[i])
		}
	}
	return head, rows
}
