package triggers

import (
	"net/netip"
	"strings"
	"testing"
)

func TestProcAddr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"0200007F:9C40", "127.0.0.2:40000"},
		{"0000000000000000FFFF00000100007F:1F90", "127.0.0.1:8080"},
		{"00000000000000000000000001000000:0050", "[::1]:80"},
	} {
		got, err := procAddr(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("procAddr(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := procAddr("zz:1"); err == nil {
		t.Errorf("procAddr(%q) = nil error; want one", "zz:1")
	}
}

// The count, on a machine described by hand: a range of 10 ports, a
// listener in it, and sockets of an earlier burst in TIME_WAIT.
func TestAssignCountsThePorts(t *testing.T) {
	loop := netip.MustParseAddrPort("127.0.0.1:8080")
	far := netip.MustParseAddrPort("192.0.2.1:80")
	m := machine{lo: 40000, hi: 40009}
	m.sockets = append(m.sockets, socket{local: netip.MustParseAddrPort("127.0.0.1:40005"), state: tcpListen})
	for p := range 9 { // 127.0.0.2 is full: 9 ports in TIME_WAIT, the 10th listened on
		m.sockets = append(m.sockets, socket{local: netip.AddrPortFrom(loopbackSource(0), uint16(40000+p)), remote: loop, state: tcpTimeWait})
	}
	routes := make([]route, 20)
	for i := range routes {
		routes[i].dest = loop
	}
	if err := m.assign("burst", routes); err != nil {
		t.Fatalf("assign 20 clients over 253 free addresses of 9 ports = %v; want none", err)
	}
	got := map[string]int{}
	for _, r := range routes {
		got[r.source.String()]++
	}
	if len(got) != 3 || got["127.0.0.3"] != 9 || got["127.0.0.4"] != 9 || got["127.0.0.5"] != 2 {
		t.Errorf("sources of 20 clients = %v; want 9 from 127.0.0.3, 9 from .4, 2 from .5 (.2 has no port free)", got)
	}

	routes = make([]route, 254*9)
	for i := range routes {
		routes[i].dest = loop
	}
	err := m.assign("burst", routes)
	if err == nil || !strings.Contains(err.Error(), "burst: 2286 clients to 127.0.0.1:8080 need a local port each, and 2277 are free") ||
		!strings.Contains(err.Error(), "9 in TIME_WAIT") || !strings.Contains(err.Error(), "wait for TIME_WAIT to clear") {
		t.Errorf("assign 2286 clients where 2277 ports are free = %v; want the count, the TIME_WAIT and what to do", err)
	}

	routes = make([]route, 1)
	routes[0].dest = far
	if err := m.assign("burst", routes); err == nil || !strings.Contains(err.Error(), "256 are kept for the steady load") {
		t.Errorf("assign 1 client to %s through 9 free ports = %v; want too few, naming the steady load's headroom", far, err)
	}
	if routes[0].source.IsValid() {
		t.Errorf("a client to %s dials from %s; want the kernel's choice", far, routes[0].source)
	}
}

func TestFilesCountsTheLimit(t *testing.T) {
	m := machine{fileLimit: 1024, filesOpen: 100}
	if err := m.files("burst", 400); err != nil {
		t.Errorf("files(400) with 100 of 1024 open = %v; want none", err)
	}
	err := m.files("burst", 500)
	if err == nil || !strings.Contains(err.Error(), "burst: 500 clients need a file each, and this process has 100 of its 1024 open (RLIMIT_NOFILE") {
		t.Errorf("files(500) with 100 of 1024 open = %v; want the count and the limit", err)
	}
}
