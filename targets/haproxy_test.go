package targets

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/cachetest"
)

// The backends a target file names are checked against a real HAProxy's
// stats page when the target connects: those it lists pass, each other
// is refused at its line with the ones it lists, every one at once. A
// page that cannot be read refuses nothing: the names' shape was
// checked with the file.
func TestBackendsAreCheckedAgainstHAProxysPage(t *testing.T) {
	_, _, stats := cachetest.HAProxyTwoBackends(t, []string{"127.0.0.1:1"}, []string{"127.0.0.1:1"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/stats" // nothing answers there
	ln.Close()
	connect := func(stats, backend, armBackend string) error {
		y := fmt.Sprintf(`endpoints: ["http://127.0.0.1:1"]
request: {path: "/items/{key}"}
keys: {list: ["1"]}
haproxy: {stats: %q, backend: %s}
arms:
  - name: a
  - name: b
    backend: %s
`, stats, backend, armBackend)
		f, err := ParseFile([]byte(y), "lb.yaml", env(nil))
		if err != nil {
			t.Fatal(err)
		}
		tg := FromFile(f)
		defer tg.Close()
		return tg.Connect(context.Background())
	}
	if err := connect(stats, "api", "other"); err != nil {
		t.Errorf("Connect with backends api and other, both HAProxy's = %v; want nil", err)
	}
	err = connect(stats, "apo", "nosuch")
	for _, want := range []string{
		`lb.yaml:4: haproxy.backend: "apo" is not a backend of HAProxy's stats page ` + stats + " (accepted: api, other)",
		`lb.yaml:8: arms[1].backend: "nosuch" is not a backend of HAProxy's stats page ` + stats + " (accepted: api, other)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Connect with backends apo and nosuch = %v; want\n  %s", err, want)
		}
	}
	if err := connect(closed, "apo", "nosuch"); err != nil {
		t.Errorf("Connect with a stats page that cannot be read = %v; want nil: the shape was checked", err)
	}
}
