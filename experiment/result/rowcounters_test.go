package result

import (
	"encoding/json"
	"maps"
	"testing"
)

// A row's and a loop's subject counters are written where their fields
// stood and read back by name, in a program that declared none of them
// (this package's tests declare no kind): a results file reads the same
// wherever it is read.
func TestSubjectCountersRoundTripUndeclared(t *testing.T) {
	row := Row{TMS: 100, Requests: 4, QueueDepth: 2, Counts: map[string]int64{"loads": 3, "zero": 0, "errs": 1}, LBRequests: 5}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"t_ms":100,"db_qps":0,"hits":0,"misses":0,"requests":4,"ok":0,"attempts":0,"unsent":0,"p99_ms":0,"connections":0,"queue_depth":2,"errs":1,"loads":3,"lb_requests":5}`
	if string(b) != want {
		t.Errorf("row JSON\n%s\nwant\n%s", b, want)
	}
	var back Row
	if err := json.Unmarshal(b, &back); err != nil || !maps.Equal(back.Counts, map[string]int64{"loads": 3, "errs": 1}) || back.LBRequests != 5 {
		t.Errorf("read back %+v, %v; want the counts loads 3, errs 1 and lb_requests 5", back, err)
	}
	loop := Loop{DBQPS: &LoopFigure{1, 2, 2}, Counts: map[string]*LoopFigure{"loads": {3, 6, 2}}, HeldBy: "loads x2"}
	b, err = json.Marshal(loop)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"attempts_per_request":null,"db_qps":{"before":1,"after":2,"ratio":2},"loads_rps":{"before":3,"after":6,"ratio":2},"misses_rps":null,"held_by":"loads x2"}`
	if string(b) != want {
		t.Errorf("loop JSON\n%s\nwant\n%s", b, want)
	}
	var l Loop
	if err := json.Unmarshal(b, &l); err != nil || len(l.Counts) != 1 || *l.Counts["loads"] != (LoopFigure{3, 6, 2}) || l.MissesRPS != nil || l.HeldBy != "loads x2" {
		t.Errorf("read back %+v, %v; want loads_rps alone among the counts", l, err)
	}
}
