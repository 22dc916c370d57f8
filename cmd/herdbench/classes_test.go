package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// The bundled testbed run as a plain service with two classes of
// requests: the herd's GET /items/{key}, whose hot keys expire at T, a
// bystander POST of a like with a JSON body, and a bystander of vegeta
// targets (two fixed items, read by vegeta's targeter). Each class's figures are its
// own and add up to the arm's; the bystander's ok answers are the likes
// the replicas acknowledged, by their own counter; its share is its
// weight's; gates on a class's figures decide the exit, and a gate over
// a class's seconds reads the class's own rows; every report format
// carries the classes.
func TestATargetsRequestClassesAreCountedApart(t *testing.T) {
	t.Parallel()
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000})
	st := tb.Status()
	localtest.Measures(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "shop.yaml")
	yaml := fmt.Sprintf(`name: the testbed as a service
endpoints: [%s]
keys:
  zipf: {from: 1, to: 1000, s: 1.1}
  hot: 50
requests:
  - name: items
    weight: 4
    path: /items/{key}
  - name: likes
    weight: 1
    method: POST
    path: /items/{key}/likes
    headers: {Content-Type: application/json}
    body: '{"by": "herdbench", "item": {key}}'
    keys: {range: {from: 1, to: 1000}}
  - name: browse
    weight: 1
    vegeta: browse.targets
redis: {address: %s, key: "item:{key}", pattern: "item:*"}
postgres: {dsn: "${SHOP_PG_DSN}", role: herdbench_app, statements: "FROM items i, pg_sleep"}
`, strings.Join(st.API, ", "), strings.TrimPrefix(st.Redis, "redis://"))
	if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	browse := fmt.Sprintf("GET %s/items/7\nX-Client: browse\n\nGET %s/items/8\n", st.API[0], st.API[len(st.API)-1])
	if err := os.WriteFile(filepath.Join(dir, "browse.targets"), []byte(browse), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SHOP_PG_DSN="+st.Postgres)
	out := t.TempDir()
	files := map[string]string{"json": "r.json", "markdown": "r.md", "html": "r.html", "junit": "r.xml"}
	// after 3.6s: one whole second from the settle (the trigger's end plus
	// 2 s), and one only, while the trigger ends within 600 ms; at 3.1s a
	// busy machine's UNLINK of the 50 keys once ended too late for any
	args := []string{"stampede", "--target", target, "--arms", "baseline", "--trigger", "expire", "--rate", "250", "--warmup", "0s",
		"--before", "2s", "--after", "3.6s", "--seed", "5", "--results-dir", out, "--state-dir", t.TempDir(), "-o", "table",
		"--gate", "requests.likes.requests > 0", "--gate", "requests.items.p99_ms < 0.001", "--gate", "requests.items.p99_ms < 60000 for 100% of seconds"}
	for format, name := range files {
		args = append(args, "-o", format+"="+filepath.Join(out, name))
	}
	acked0 := apiCounter(t, st.API, admin.MetricWrites, admin.WriteAcked)
	code, stdout, stderr := herdbenchEnv(t, env, args...)
	if code != exitGatesFailed {
		t.Fatalf("stampede = exit %d; want %d, the gate on items' p99 failing\n%s%s", code, exitGatesFailed, stdout, stderr)
	}
	t.Logf("stampede:\n%s%s", stdout, stderr)
	acked := apiCounter(t, st.API, admin.MetricWrites, admin.WriteAcked) - acked0
	rep := readResults(t, filepath.Join(out, "r.json"))
	a := rep.Arms[0]
	items, likes, browsing := a.Requests["items"], a.Requests["likes"], a.Requests["browse"]
	if items == nil || likes == nil || browsing == nil || len(rep.Environment.Requests) != 3 || !items.Herd || likes.Herd {
		t.Fatalf("classes: %v, environment %+v; want items (the herd's), likes and browse", a.Requests, rep.Environment.Requests)
	}
	if items.Requests+likes.Requests+browsing.Requests != a.HTTP.Requests || items.OK+likes.OK+browsing.OK != a.HTTP.OK {
		t.Errorf("items %d (%d ok) + likes %d (%d ok) + browse %d (%d ok); want the arm's %d (%d ok)", items.Requests, items.OK,
			likes.Requests, likes.OK, browsing.Requests, browsing.OK, a.HTTP.Requests, a.HTTP.OK)
	}
	if total := a.HTTP.Requests; likes.Requests < total/6-2 || likes.Requests > total/6+2 || browsing.Requests < total/6-2 || browsing.Requests > total/6+2 {
		t.Errorf("likes sent %d and browse %d of %d requests after T; want a sixth each (weights 4:1:1)", likes.Requests, browsing.Requests, total)
	}
	var sent int64 // every like of the load, which ran from T - before (no warmup)
	for _, r := range likes.Timeline {
		sent += r.OK
	}
	if diff := acked - float64(sent); diff < 0 || diff > 1 {
		t.Errorf("the replicas acknowledged %v likes; the likes class has %d ok over its timeline", acked, sent)
	}
	if g := clitest.Gate(t, out, "requests.items.p99_ms < 0.001"); g.Pass || g.Measured == nil || *g.Measured != items.P99MS {
		t.Errorf("gate on items' p99: %+v; want it failed, measuring %v", g, items.P99MS)
	}
	classSecond(t, out, a, items)
	for format, want := range map[string]string{"table": "likes", "r.md": "likes", "r.html": `p99_ms-likes`, "r.xml": `verdict:baseline:likes`} {
		text := stdout
		if format != "table" {
			b, err := os.ReadFile(filepath.Join(out, format))
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		if !strings.Contains(text, want) || !strings.Contains(text, "items") {
			t.Errorf("%s lacks the classes (%q):\n%.2000s", format, want, text)
		}
	}
}

// classSecond checks the gate over the items' seconds of the run in out:
// its one whole second after arm a's settle, and its p99 the highest of
// the class's ten rows from it.
func classSecond(t *testing.T, out string, a result.ArmResult, items *result.RequestFigures) {
	t.Helper()
	if g := clitest.Gate(t, out, "requests.items.p99_ms < 60000 for 100% of seconds"); g.Seconds == nil || g.Seconds.Count != 1 {
		t.Errorf("gate over the items' seconds: %+v; want one second, from T+%dms", g, a.SettledMS())
	} else if w := g.Seconds.Windows[0]; w.StartMS < a.SettledMS() || w.StartMS >= a.SettledMS()+100 || w.Value == nil || !w.Held || !g.Pass {
		t.Errorf("the items' second: %+v, pass %v; want it from the first row at or after T+%dms, held", w, g.Pass, a.SettledMS())
	} else {
		highest := -1.0
		for _, r := range items.Timeline {
			if r.TMS >= w.StartMS && r.TMS < w.StartMS+1000 && r.Requests > r.Unsent {
				highest = max(highest, r.P99MS)
			}
		}
		if *w.Value != highest {
			t.Errorf("the items' second from T+%dms: p99 %v; its rows' highest is %v", w.StartMS, *w.Value, highest)
		}
	}
}

// apiCounter sums a counter of the replicas' /metrics, over the series
// whose one label is value ("": every series).
func apiCounter(t *testing.T, urls []string, name, value string) float64 {
	t.Helper()
	var n float64
	for _, u := range urls {
		resp, err := http.Get(u + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mfs[name].GetMetric() {
			if l := m.GetLabel(); value == "" || (len(l) == 1 && l[0].GetValue() == value) {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
