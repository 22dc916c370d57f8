package experiment

import (
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
)

// returns sets each server's returns from T (lb.servers.NAME.returns,
// the first also as lb.servers.NAME.return) from the timeline's rows,
// each share from the weights HAProxy's last reading says each server was
// given (end: uweight, or weight on a HAProxy whose page lacks it).
func returns(lb *result.LoadBalancer, rows []result.Row, end observe.LBStats) {
	given := map[string]int64{}
	var up []string
	for _, r := range end.Servers {
		given[r.Name] = r.UserWeight
		if r.UserWeight == 0 {
			given[r.Name] = r.Weight
		}
		if r.Up() {
			up = append(up, r.Name)
		}
	}
	for name, sv := range lb.Servers {
		for _, b := range backRows(name, rows) {
			sv.Returns = append(sv.Returns, returnAt(name, rows, b, given, up))
		}
		if len(sv.Returns) > 0 {
			first := sv.Returns[0]
			sv.Return = &first
		}
	}
}

// returnAt is one server's return at row b, a row backRows gives: each
// return's figures by the same rule, its full share sought to the arm's
// end (past a later return when it went away again before it).
func returnAt(name string, rows []result.Row, b int, given map[string]int64, upAtEnd []string) result.LBReturn {
	second := int(time.Second / result.RowWidth)
	var n int64
	first := rows[b:min(b+second, len(rows))]
	for _, r := range first {
		n += r.LBServers[name]
	}
	ret := result.LBReturn{BackMS: rows[b].TMS,
		FirstSecondRPS: result.Round2(float64(n) / (float64(len(first)) * result.RowWidth.Seconds())),
		Share:          result.Round4(shareOf(name, given, upAtEnd))}
	for k := b; k+second <= len(rows); k++ {
		if fullShare(name, rows[k:k+second], given) {
			ms := rows[k].TMS - rows[b].TMS
			ret.FullShareMS = &ms
			break
		}
	}
	return ret
}

// backRows are the indexes of the rows from T whose reading lists name
// UP (its weight in lb_weights above 0) after a reading, in an earlier
// row, that did not, in order; none when no row does. Rows no reading
// fell in are passed over.
func backRows(name string, rows []result.Row) []int {
	var backs []int
	read, wasUp := false, false
	for i, r := range rows {
		w, ok := r.LBWeights[name]
		if !ok {
			continue
		}
		if r.TMS >= 0 && read && !wasUp && w > 0 {
			backs = append(backs, i)
		}
		read, wasUp = true, w > 0
	}
	return backs
}

// fullShare says whether name took at least result.FullShareOf its share
// of the backend's attempts over the second of rows: its share over the
// servers UP at that second's last reading, itself among them.
func fullShare(name string, second []result.Row, given map[string]int64) bool {
	var own, sent int64
	var weights map[string]int64
	for _, r := range second {
		own += r.LBServers[name]
		sent += r.LBSent
		if r.LBWeights != nil {
			weights = r.LBWeights
		}
	}
	if sent == 0 || weights == nil {
		return false
	}
	var up []string
	for s, w := range weights {
		if w > 0 {
			up = append(up, s)
		}
	}
	return float64(own) >= result.FullShareOf*shareOf(name, given, up)*float64(sent)
}

// shareOf is name's given weight over the given weights of the servers
// up, name counted among them whether or not it is; 0 when they sum to 0.
func shareOf(name string, given map[string]int64, up []string) float64 {
	total := given[name]
	for _, s := range up {
		if s != name {
			total += given[s]
		}
	}
	if total == 0 {
		return 0
	}
	return float64(given[name]) / float64(total)
}
