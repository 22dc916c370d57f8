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
	if a1 := st.Servers[0]; a1.Sessions != 7 || a1.Responses5xx != 3 || a1.Status != "DOWN" || a1.Weight != 1 {
		t.Errorf("a1 %+v; want 7 sessions, its 3 503s, DOWN, weight 1", a1)
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
