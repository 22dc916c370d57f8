package runs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/testbed/cachetest"
)

// A server that flaps behind a real HAProxy is reported back each time:
// api-0 goes away at T for a second, serves two seconds, and goes away
// for a second again. Its returns are two, in order, the first its
// return as before, and each is HAProxy's: the test reads its stats page
// apart every 50 ms, and each return's back_ms and first second's
// attempts lie where the page says (backIsHAProxys). The HTML report
// charts its weight.
func TestAFlappingServersEveryReturn(t *testing.T) {
	dir := t.TempDir()
	api0, api1 := startOrigin(t, dir), startOrigin(t, t.TempDir())
	base, stats := cachetest.HAProxyChecked(t, []string{api0.addr, api1.addr}, 3, "")
	target := filepath.Join(dir, "lb.yaml")
	yaml := fmt.Sprintf("endpoints: [%s]\nrequest: {path: \"/items/{key}\"}\nkeys: {range: {from: 1, to: 100}, hot: 1}\nhaproxy: {stats: %q, backend: api}\n", base, stats)
	if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	gone, back := filepath.Join(dir, "gone"), filepath.Join(dir, "back")
	run := fmt.Sprintf("touch %s && sleep 1 && touch %s && sleep 2 && touch %s && sleep 1 && touch %s", gone, back, gone, back)
	out := t.TempDir()
	jsonFile := filepath.Join(out, "r.json")
	polls := pollHAProxy(t, stats, "api-0")
	code, stdout, stderr := clitest.Run(t, nil, "stampede", "--target", target, "--arms", "baseline", "--trigger", "command", "--run", run,
		"--command-timeout", "6s", "--rate", "200", "--warmup", "0s", "--before", "1s", "--after", "7s",
		"--seed", "3", "--results-dir", out, "-o", "json="+jsonFile, "-o", "html="+filepath.Join(out, "r.html"), "--state-dir", t.TempDir())
	page := polls()
	t.Logf("stampede:\n%s%s", stdout, stderr)
	if code != clitest.ExitOK {
		t.Fatalf("stampede with api-0 flapping = exit %d; want 0", code)
	}
	a := clitest.ReadResults(t, jsonFile).Arms[0]
	if a.LB == nil || a.LB.Servers["api-0"] == nil {
		t.Fatalf("lb %v; want HAProxy read, api-0 among its servers", a.LB)
	}
	s := a.LB.Servers["api-0"]
	backs := pollReturns(page, a.T)
	t.Logf("api-0: %d returns in the results, %d on HAProxy's page read apart", len(s.Returns), len(backs))
	if len(s.Returns) != 2 || len(backs) != 2 {
		t.Fatalf("api-0's returns %+v, %d on HAProxy's page read apart; want 2 of each: it went away twice", s.Returns, len(backs))
	}
	if s.Return == nil || !reflect.DeepEqual(*s.Return, s.Returns[0]) {
		t.Errorf("api-0's return %+v; want its first of returns, %+v", s.Return, s.Returns[0])
	}
	if s.Returns[1].BackMS < s.Returns[0].BackMS+1000 {
		t.Errorf("api-0 back at %d ms, then at %d ms; want the second a second or more after (two seconds up, one away)", s.Returns[0].BackMS, s.Returns[1].BackMS)
	}
	for i, ret := range s.Returns {
		backIsHAProxys(t, a, ret, page, backs[i])
	}
	// the HTML report charts the weights the rows give api-0: 0 twice
	everyFormatHolds(t, out, map[string]string{"r.html": `data-chart="lb_weights-baseline" data-arm="api-0"`})
}
