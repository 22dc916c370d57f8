package experiment

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/observe"
)

// lbReading is HAProxy's counters at one instant: the backend's requests
// and 5xx, and each of two servers' sessions, 5xx and eresp.
func lbReading(at time.Time, req, b5xx int64, a1, a2 observe.LBRow) observe.Sample {
	a1.Name, a2.Name = "a1", "a2"
	return observe.Sample{At: at, LB: &observe.LBStats{Backend: observe.LBRow{Name: "BACKEND", Requests: req, Responses5xx: b5xx},
		Servers: []observe.LBRow{a1, a2}}}
}

// The load balancer's figures are the counters' growth from T to the end
// along the samples, a reload (req_tot down) counting from zero, as the
// timeline's rows count it; its own 503s are its 5xx less its servers'
// 5xx and eresp, at most the clients' shed answers.
func TestLoadBalancerFiguresAlongTheSamples(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	atT := lbReading(at(0), 10_000, 40, observe.LBRow{Sessions: 5_000, Responses5xx: 10}, observe.LBRow{Sessions: 5_000, Responses5xx: 10})
	samples := []observe.Sample{
		lbReading(at(100), 10_100, 40, observe.LBRow{Sessions: 5_050, Responses5xx: 10}, observe.LBRow{Sessions: 5_050, Responses5xx: 10}),
		// reloaded: every counter starts again
		lbReading(at(200), 60, 30, observe.LBRow{Sessions: 30}, observe.LBRow{Sessions: 0, RespErrors: 0}),
	}
	end := lbReading(at(300), 160, 50, observe.LBRow{Sessions: 80, Responses5xx: 5}, observe.LBRow{Sessions: 30, RespErrors: 5})
	g := lbSpan(atT, end, samples)
	lb := lbOf(g, *end.LB)
	// 100 before the reload, 60 and 100 after it
	if lb.Requests != 260 || lb.ServerAttempts != 100+30+80 || lb.Servers["a1"].Attempts != 50+30+50 || lb.Servers["a2"].Attempts != 50+0+30 {
		t.Errorf("lb %+v, a1 %+v, a2 %+v; want 260 requests, 210 server attempts (130 and 80)", *lb, *lb.Servers["a1"], *lb.Servers["a2"])
	}
	// the backend's 5xx grew 0 + 30 + 20 = 50, its servers' 5 (a1): 45 its own
	if lb.Own5xx != 45 {
		t.Errorf("own 5xx %d; want 45: the backend's 50 less a1's 5", lb.Own5xx)
	}
	for _, tt := range []struct{ shed, wantShed, wantLB int64 }{
		{100, 60, 40}, // 45 own less a2's 5 eresp (its 504s): 40 were 503s
		{30, 0, 30},   // at most what the clients saw as shed
	} {
		res := &result.ArmResult{HTTP: result.HTTP{Errors: result.Errors{Shed: tt.shed}}}
		own503(res, lb, g)
		if res.HTTP.Errors.Shed != tt.wantShed || res.HTTP.Errors.LB != tt.wantLB {
			t.Errorf("%d shed: shed %d, lb %d; want %d and %d", tt.shed, res.HTTP.Errors.Shed, res.HTTP.Errors.LB, tt.wantShed, tt.wantLB)
		}
	}
	// the rows count the same growth, the reload included
	rows := lbRows(append(append([]observe.Sample{atT}, samples...), end), at(0))
	var sent int64
	for _, r := range rows {
		sent += r.LBSent
	}
	if sent != lb.ServerAttempts {
		t.Errorf("the rows sent %d; the arm's server attempts %d: want the same growth", sent, lb.ServerAttempts)
	}
}

// A server's peak is its most attempts in any ten rows from T, a second.
func TestPeakIsTheBusiestSecond(t *testing.T) {
	var rows []result.Row
	for i := -5; i < 30; i++ {
		n := int64(1)
		if i >= 10 && i < 15 {
			n = 30 // 150 in half a second
		}
		if i < 0 {
			n = 100 // before T: not the arm's
		}
		rows = append(rows, result.Row{TMS: int64(i) * 100, LBServers: map[string]int64{"a1": n}})
	}
	lb := &result.LoadBalancer{Servers: map[string]*result.LBServer{"a1": {}}}
	peaks(lb, rows)
	if got := lb.Servers["a1"].PeakRPS; got != 155 {
		t.Errorf("peak %v/s; want 155: the five rows of 30 and five of 1 in one second", got)
	}
}

// A results file written while lb.servers was a list of servers with
// their names still reads, each server under its name.
func TestLBServersReadTheOldList(t *testing.T) {
	var lb result.LoadBalancer
	old := `{"requests": 10, "servers": [{"name": "api-0", "attempts": 6, "status": "UP"}, {"name": "api-1", "attempts": 4}]}`
	if err := json.Unmarshal([]byte(old), &lb); err != nil {
		t.Fatal(err)
	}
	if len(lb.Servers) != 2 || lb.Servers["api-0"].Attempts != 6 || lb.Servers["api-0"].Status != "UP" || lb.Servers["api-1"].Attempts != 4 {
		t.Errorf("servers %v; want api-0 (6, UP) and api-1 (4) by name", lb.Servers)
	}
	if err := json.Unmarshal([]byte(`{"servers": 7}`), &lb); err == nil {
		t.Error("servers: 7 read; want an error naming the accepted forms")
	}
}
