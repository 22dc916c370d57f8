package observe

import (
	"os"
	"strings"
	"testing"
)

// HAProxy 2.6's own stats page, saved from Debian's haproxy: a backend of
// two servers, a1 answering 4 requests 200 and 3 requests 503 of its
// own, then both down while 5 more requests came, which HAProxy answered
// 503 itself. ParseLBStats reads the backend's and its servers' counters
// by their column names, and Own5xx is HAProxy's 5 own answers.
func TestParseLBStatsReadsHAProxysOwnPage(t *testing.T) {
	f, err := os.Open("testdata/haproxy-2.6.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := ParseLBStats(f, "api")
	if err != nil {
		t.Fatal(err)
	}
	b := st.Backend
	if b.Name != "BACKEND" || b.Requests != 12 || b.Sessions != 12 || b.Responses5xx != 8 || b.ConnErrors != 5 {
		t.Errorf("backend %+v; want 12 requests and sessions, 8 5xx, 5 with no server to try", b)
	}
	if len(st.Servers) != 2 || st.Servers[0].Name != "a1" || st.Servers[1].Name != "a2" {
		t.Fatalf("servers %+v; want a1 and a2, in the page's order, no FRONTEND or BACKEND", st.Servers)
	}
	if a1 := st.Servers[0]; a1.Sessions != 7 || a1.Responses5xx != 3 || a1.Status != "DOWN" || a1.Up() || a1.Weight != 1 || a1.UserWeight != 1 {
		t.Errorf("a1 %+v; want 7 sessions, its 3 503s, DOWN (not up), weight and uweight 1", a1)
	}
	if n := st.Own5xx(); n != 5 {
		t.Errorf("Own5xx = %d; want 5: the backend's 8 less a1's 3", n)
	}
	if _, err := ParseLBStats(strings.NewReader(readFile(t, "testdata/haproxy-2.6.csv")), "web"); err == nil ||
		!strings.Contains(err.Error(), `no backend "web"`) {
		t.Errorf("a backend the page does not list: err %v; want it named", err)
	}
	if _, err := ParseLBStats(strings.NewReader("<html>stats</html>\n"), "api"); err == nil || !strings.Contains(err.Error(), ";csv") {
		t.Errorf("an HTML page: err %v; want the CSV form named", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The retries HAProxy made (lb.retries), however they ended: the
// servers' attempts beyond the requests that reached one, within the
// bounds wretr and wredis set (HAProxy 2.6 counts a retry once in either,
// an HTTP retry once more in wretr).
func TestRetriesMadeHoldRedispatches(t *testing.T) {
	for _, c := range []struct {
		name                                string
		wretr, wredis, requests, attempts   int64
		backendConnErrors, serverConnErrors int64
		want                                int64
	}{
		{"refused connections, redispatched (HAProxy 2.6.12, by hand)", 0, 214, 199, 413, 8, 8, 214},
		{"500s retried and redispatched (HAProxy 2.6.12, by hand)", 190, 215, 200, 415, 8, 8, 215},
		{"nothing retried, the snapshots' edges", 0, 0, 600, 606, 0, 0, 0},
		{"an attempt counted before T: at least every redispatch", 0, 193, 201, 393, 0, 0, 193},
		{"HTTP retries on one server: counted twice in wretr", 20, 0, 100, 110, 0, 0, 10},
		{"requests with no server to try reached none", 10, 0, 130, 110, 30, 0, 10},
	} {
		g := LBStats{Backend: LBRow{Retries: c.wretr, Redispatches: c.wredis, Requests: c.requests, ConnErrors: c.backendConnErrors},
			Servers: []LBRow{{Name: "a1", ConnErrors: c.serverConnErrors, Sessions: c.attempts}}}
		if got := g.RetriesMade(); got != c.want {
			t.Errorf("%s: RetriesMade(wretr %d, wredis %d, %d requests, %d attempts) = %d; want %d",
				c.name, c.wretr, c.wredis, c.requests, c.attempts, got, c.want)
		}
	}
}

// Queued is every request in HAProxy's queues: the backend's (no server
// yet) and each server's (at its maxconn).
func TestQueuedSumsTheBackendsAndTheServersQueues(t *testing.T) {
	st := LBStats{Backend: LBRow{Queue: 2, Current: 9}, Servers: []LBRow{{Queue: 3}, {Queue: 0}, {Queue: 4}}}
	if got := st.Queued(); got != 9 {
		t.Errorf("Queued(backend 2, servers 3, 0, 4) = %d; want 9", got)
	}
}
