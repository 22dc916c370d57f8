package result

import "testing"

// A gate names one server's figure as lb.servers.NAME.FIGURE: a name may
// hold dots, and so may a figure (its return's); the figure is the
// longest that ends the path.
func TestLBServerPathSplitsNameAndFigure(t *testing.T) {
	for _, c := range []struct{ path, server, fig string }{
		{"lb.servers.api-2.peak_rps", "lb.servers.api-2.", "peak_rps"},
		{"lb.servers.web.1.attempts", "lb.servers.web.1.", "attempts"},
		{"lb.servers.api-2.return.first_second_rps", "lb.servers.api-2.", "return.first_second_rps"},
		{"lb.servers.web.1.return.full_share_ms", "lb.servers.web.1.", "return.full_share_ms"},
		{"lb.servers.return.back_ms", "", ""}, // no name
		{"lb.servers.api-2.return", "", ""},
		{"lb.servers.api-2.first_second_rps", "", ""},
		{"lb.retries", "", ""},
	} {
		server, fig, ok := LBServerPath(c.path)
		if server != c.server || fig != c.fig || ok != (c.fig != "") {
			t.Errorf("LBServerPath(%q) = %q, %q, %t; want %q, %q, %t", c.path, server, fig, ok, c.server, c.fig, c.fig != "")
		}
	}
}
