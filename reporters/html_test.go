package reporters

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

var chartKeys = []string{"db_qps", "p99_ms", "drop_rate"}

// renderHTML renders reps and parses the page as a browser would.
func renderHTML(t *testing.T, reps ...*experiment.Report) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, reps); err != nil {
		t.Fatal(err)
	}
	if err := wellFormed(b.Bytes()); err != nil {
		t.Errorf("the page is not well formed: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), doc
}

// voids are the HTML elements without an end tag.
var voids = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// wellFormed checks what html.Parse forgives: every element but a void
// one is closed, in order, and nothing is closed that was not open.
func wellFormed(page []byte) error {
	z := html.NewTokenizer(bytes.NewReader(page))
	var open []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return z.Err()
			}
			if len(open) > 0 {
				return fmt.Errorf("unclosed at the end: %v", open)
			}
			return nil
		case html.StartTagToken:
			if tag, _ := z.TagName(); !voids[string(tag)] {
				open = append(open, string(tag))
			}
		case html.EndTagToken:
			tag, _ := z.TagName()
			if len(open) == 0 || open[len(open)-1] != string(tag) {
				return fmt.Errorf("</%s> closes %v", tag, open)
			}
			open = open[:len(open)-1]
		}
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// find returns the elements named tag (any when empty) whose attributes
// include every key=value of want.
func find(root *html.Node, tag string, want map[string]string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (tag == "" || n.Data == tag) {
			ok := true
			for k, v := range want {
				if got, has := attr(n, k); !has || got != v {
					ok = false
				}
			}
			if ok {
				out = append(out, n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// Every arm has exactly one series in every chart, drawn (a non-empty path
// that starts with a move).
func TestHTMLSeriesPerArmAndChart(t *testing.T) {
	rep := loadReport(t, fixture)
	_, doc := renderHTML(t, rep)
	for _, key := range chartKeys {
		if svgs := find(doc, "svg", map[string]string{"data-report": "r1", "data-chart": key}); len(svgs) != 1 {
			t.Errorf("%d svg charts %s; want 1", len(svgs), key)
		}
		for _, a := range rep.Arms {
			paths := find(doc, "path", map[string]string{"class": "series", "data-report": "r1", "data-chart": key, "data-arm": a.Name})
			if len(paths) != 1 {
				t.Errorf("chart %s: %d series for arm %s; want 1", key, len(paths), a.Name)
				continue
			}
			if d, _ := attr(paths[0], "d"); !strings.HasPrefix(d, "M") {
				t.Errorf("chart %s, arm %s: d = %q; want a path starting with M", key, a.Name, d)
			}
		}
		if n := len(find(doc, "path", map[string]string{"class": "series", "data-chart": key})); n != len(rep.Arms) {
			t.Errorf("chart %s has %d series; want %d, one per arm", key, n, len(rep.Arms))
		}
	}
}

var pathX = regexp.MustCompile(`[MH](-?[0-9.]+)`)

// The arms share each chart's x range (ms from T): the earliest row starts
// at the plot's left edge, the latest row ends at its right edge, T sits
// where the x axis reads 0, and the aborted arm stops short.
func TestHTMLSharedAxes(t *testing.T) {
	rep := loadReport(t, fixture)
	_, doc := renderHTML(t, rep)
	// the fixture's rows run from -2000 to 3900 (+100), so T is at 2/6 of the width
	wantT := coord(plotLeft + 2000.0/6000*(plotRight-plotLeft))
	for _, key := range chartKeys {
		svg := find(doc, "svg", map[string]string{"data-chart": key})[0]
		markers := find(svg, "line", map[string]string{"class": "t-marker"})
		if len(markers) != 1 {
			t.Fatalf("chart %s has %d T markers; want 1", key, len(markers))
		}
		if x, _ := attr(markers[0], "x1"); x != wantT {
			t.Errorf("chart %s: T at x=%s; want %s", key, x, wantT)
		}
		for _, a := range rep.Arms {
			p := find(svg, "path", map[string]string{"data-arm": a.Name})[0]
			d, _ := attr(p, "d")
			xs := pathX.FindAllStringSubmatch(d, -1)
			first, _ := strconv.ParseFloat(xs[0][1], 64)
			last, _ := strconv.ParseFloat(xs[len(xs)-1][1], 64)
			if first != plotLeft {
				t.Errorf("chart %s, arm %s starts at x=%g; want %d (the earliest row, -2s)", key, a.Name, first, plotLeft)
			}
			wantLast := float64(plotRight)
			if a.Aborted != nil { // its last row is at +1.5s
				wantLast, _ = strconv.ParseFloat(coord(plotLeft+3600.0/6000*(plotRight-plotLeft)), 64)
			}
			if last != wantLast {
				t.Errorf("chart %s, arm %s ends at x=%g; want %g", key, a.Name, last, wantLast)
			}
		}
	}
}

// Nothing on the page loads from anywhere: no script, stylesheet, font,
// image or frame, no URL but the empty data: icon.
func TestHTMLIsSelfContained(t *testing.T) {
	out, doc := renderHTML(t, loadReport(t, fixture))
	for _, tag := range []string{"script", "img", "iframe", "object", "embed", "image", "use"} {
		if n := len(find(doc, tag, nil)); n > 0 {
			t.Errorf("the page has %d <%s> elements; want none", n, tag)
		}
	}
	for _, l := range find(doc, "link", nil) {
		if href, _ := attr(l, "href"); href != "data:," {
			t.Errorf("<link href=%q>: the page must load nothing", href)
		}
	}
	for _, s := range []string{"http://", "https://", "url(", "@import", "src="} {
		if strings.Contains(out, s) {
			t.Errorf("the page contains %q; it must render offline", s)
		}
	}
}

// Names and expressions from the results are text, never markup.
func TestHTMLEscapes(t *testing.T) {
	rep := loadReport(t, fixture)
	hostile := `retry=exp:50ms:500ms:2"><script>alert(1)</script>&amp;'`
	rep.Arms[1].Name = hostile
	rep.Gates[1].Arm = hostile
	rep.Plan.Trigger = `ex<pire>"`
	rep.Environment.Redis = "</style><b>7</b>"
	rep.Arms[3].Aborted.Reason = "p99 > 990 & <rising>"
	out, doc := renderHTML(t, rep)
	if n := len(find(doc, "script", nil)); n != 0 {
		t.Errorf("a name became %d <script> elements", n)
	}
	if n := len(find(doc, "b", nil)); n != 0 {
		t.Errorf("the environment became %d <b> elements", n)
	}
	for _, key := range chartKeys {
		if n := len(find(doc, "path", map[string]string{"data-chart": key, "data-arm": hostile})); n != 1 {
			t.Errorf("chart %s: %d series with data-arm %q; want 1, the name as written", key, n, hostile)
		}
	}
	if n := len(find(doc, "section", map[string]string{"data-trigger": `ex<pire>"`})); n != 1 {
		t.Errorf("%d sections with the trigger as written; want 1", n)
	}
	for _, s := range []string{"db.queries &lt;= 150", "p99 &gt; 990 &amp; &lt;rising&gt;"} {
		if !strings.Contains(out, s) {
			t.Errorf("the page lacks the escaped text %q", s)
		}
	}
}

func TestHTMLSeveralReports(t *testing.T) {
	a, b := loadReport(t, fixture), loadReport(t, fixture)
	b.Plan.Trigger = "ttl"
	b.Arms = b.Arms[:2]
	out, doc := renderHTML(t, a, b)
	for i, want := range []struct {
		id, trigger string
		arms        int
	}{{"r1", "expire", 4}, {"r2", "ttl", 2}} {
		secs := find(doc, "section", map[string]string{"id": want.id, "data-trigger": want.trigger})
		if len(secs) != 1 {
			t.Fatalf("report %d: %d sections %s for %s; want 1", i, len(secs), want.id, want.trigger)
		}
		if n := len(find(secs[0], "path", map[string]string{"class": "series"})); n != want.arms*len(chartKeys) {
			t.Errorf("report %s: %d series; want %d", want.id, n, want.arms*len(chartKeys))
		}
	}
	if !strings.Contains(out, "<title>herdbench: expire, ttl</title>") || len(find(doc, "nav", nil)) != 1 {
		t.Errorf("the page lacks its title or its nav across reports")
	}
	var again bytes.Buffer
	if err := HTML(&again, []*experiment.Report{a, b}); err != nil || again.String() != out {
		t.Errorf("rendering the same reports twice gave different pages (err %v)", err)
	}
}

func TestHTMLErrors(t *testing.T) {
	tests := []struct {
		name string
		reps []*experiment.Report
		want string
	}{
		{"none", nil, "html report: no results (accepted: one or more reports)"},
		{"nil", []*experiment.Report{loadReport(t, fixture), nil}, "html report: report 2 of 2 is nil"},
	}
	for _, tt := range tests {
		if err := HTML(&bytes.Buffer{}, tt.reps); err == nil || err.Error() != tt.want {
			t.Errorf("HTML(%s) = %v; want %q", tt.name, err, tt.want)
		}
	}
}

func TestStepPath(t *testing.T) {
	x := func(ms int64) float64 { return float64(ms) / 100 }
	y := func(v float64) float64 { return v }
	all := func(r result.Row) (float64, bool) { return r.P99MS, true }
	withRequests := func(r result.Row) (float64, bool) { return r.P99MS, r.Requests > 0 }
	tests := []struct {
		name  string
		rows  []result.Row
		value func(result.Row) (float64, bool)
		want  string
	}{
		{"empty", nil, all, ""},
		{"one row", []result.Row{{TMS: 0, P99MS: 5}}, all, "M0.0 5.0 H1.0"},
		{"steps, equal rows merged", []result.Row{{TMS: -100, P99MS: 1}, {TMS: 0, P99MS: 1}, {TMS: 100, P99MS: 7}}, all,
			"M-1.0 1.0 H1.0 V7.0 H2.0"},
		{"gap without requests", []result.Row{{TMS: 0, P99MS: 1, Requests: 1}, {TMS: 100}, {TMS: 200, P99MS: 3, Requests: 1}}, withRequests,
			"M0.0 1.0 H1.0 M2.0 3.0 H3.0"},
		{"missing row", []result.Row{{TMS: 0, P99MS: 1}, {TMS: 300, P99MS: 1}}, all, "M0.0 1.0 H1.0 M3.0 1.0 H4.0"},
	}
	for _, tt := range tests {
		if got := stepPath(tt.rows, tt.value, x, y); got != tt.want {
			t.Errorf("stepPath(%s) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestNiceScale(t *testing.T) {
	tests := []struct{ max, top, step float64 }{
		{0, 1, 0.2},
		{300.22, 400, 100},
		{1005, 1250, 250},
		{58.3, 60, 20},
		{1, 1, 0.2},
		{0.004, 0.004, 0.001},
	}
	for _, tt := range tests {
		top, step := niceScale(tt.max)
		if number(top) != number(tt.top) || number(step) != number(tt.step) {
			t.Errorf("niceScale(%g) = (%g, %g); want (%g, %g)", tt.max, top, step, tt.top, tt.step)
		}
	}
}

func TestTLabel(t *testing.T) {
	for ms, want := range map[int64]string{0: "T", -2000: "-2s", 1500: "+1.5s", 100: "+0.1s"} {
		if got := tLabel(ms); got != want {
			t.Errorf("tLabel(%d) = %q; want %q", ms, got, want)
		}
	}
}

func TestFlatten(t *testing.T) {
	got, err := flatten(struct {
		A int            `json:"a"`
		B map[string]any `json:"b"`
		C []string       `json:"c"`
		D *int           `json:"d"`
		E []int          `json:"e"`
	}{1, map[string]any{"x": true}, []string{"p", "q"}, nil, []int{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []kv{{"a", "1"}, {"b.x", "true"}, {"c[0]", "p"}, {"c[1]", "q"}, {"d", "null"}, {"e", "[]"}}
	if len(got) != len(want) {
		t.Fatalf("flatten = %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flatten[%d] = %v; want %v", i, got[i], want[i])
		}
	}
}

// The knob table shows the config a subject wrote for its arm, key by key,
// and none for a service's arm, which has no config of herdbench's: no
// config rows rather than a row of null.
func TestKnobsShowTheSubjectsConfigOnly(t *testing.T) {
	arms := []result.ArmResult{
		{Name: "testbed", Config: []byte(`{"strategy":"lock","ttl":"1s"}`)},
		{Name: "service"},
	}
	tbl, err := knobs(arms)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range tbl.Rows {
		keys = append(keys, r.Key)
	}
	for _, want := range []string{"config.strategy", "config.ttl"} {
		if !slices.Contains(keys, want) {
			t.Errorf("knob rows %q; want %s", keys, want)
		}
	}
	if slices.Contains(keys, "config") {
		t.Errorf("knob rows %q; want no bare config row (null for the service)", keys)
	}
}

// An arm behind a load balancer has a chart of its own: one series per
// server, each row's attempts at 10 a second per attempt in its 100 ms,
// and the trigger's end marked beside T.
func TestHTMLChartsEachServerBehindTheLoadBalancer(t *testing.T) {
	rep := loadReport(t, fixture)
	a := &rep.Arms[0]
	ended := int64(500)
	a.Trigger.EndedMS = &ended
	a.LB = &result.LoadBalancer{Servers: map[string]*result.LBServer{"api-1": {}, "api-2": {}}}
	for i := range a.Timeline {
		a.Timeline[i].LBServers = map[string]int64{"api-1": 10, "api-2": int64(i)}
	}
	_, doc := renderHTML(t, rep)
	key := "lb_servers-" + a.Name
	if svgs := find(doc, "svg", map[string]string{"data-report": "r1", "data-chart": key}); len(svgs) != 1 {
		t.Fatalf("%d charts %s; want 1", len(svgs), key)
	}
	for _, s := range []string{"api-1", "api-2"} {
		if n := len(find(doc, "path", map[string]string{"class": "series", "data-chart": key, "data-arm": s})); n != 1 {
			t.Errorf("chart %s: %d series for server %s; want 1", key, n, s)
		}
	}
	if n := len(find(doc, "line", map[string]string{"class": "t-marker t-end"})); n != 1 {
		t.Errorf("%d marks of the trigger's end; want 1, on the load balancer's chart", n)
	}
	if n := len(find(doc, "svg", map[string]string{"data-chart": "lb_servers-" + rep.Arms[1].Name})); n != 0 {
		t.Errorf("arm %s has no load balancer, and %d charts of one", rep.Arms[1].Name, n)
	}
}

// An arm whose trigger restarted the testbed's replicas has a chart of
// each replica's requests a second; another trigger's arm has none.
func TestHTMLChartsEachReplicaOnARestart(t *testing.T) {
	rep := loadReport(t, fixture)
	for i := range rep.Arms {
		for j := range rep.Arms[i].Timeline {
			rep.Arms[i].Timeline[j].Replicas = map[string]int64{"api-1": 10, "api-2": int64(j % 3)}
		}
	}
	rep.Arms[0].Trigger.Name, rep.Arms[1].Trigger.Name = "restart", "expire"
	_, doc := renderHTML(t, rep)
	key := "replicas-" + rep.Arms[0].Name
	for _, s := range []string{"api-1", "api-2"} {
		if n := len(find(doc, "path", map[string]string{"class": "series", "data-chart": key, "data-arm": s})); n != 1 {
			t.Errorf("chart %s: %d series for replica %s; want 1", key, n, s)
		}
	}
	if n := len(find(doc, "svg", map[string]string{"data-chart": "replicas-" + rep.Arms[1].Name})); n != 0 {
		t.Errorf("arm %s's trigger restarted nothing, and it has %d charts of its replicas", rep.Arms[1].Name, n)
	}
}

// A server's weight is charted as the level it is, not as a rate: a
// weight of 100 tops the y axis at 100, where the attempts' chart would
// read 1000 a second; a row without weights (HAProxy not read) is a gap.
// An arm whose rows carry no weights (results from before lb_weights)
// has no chart of them.
func TestHTMLChartsEachServersWeightAsALevel(t *testing.T) {
	rep := loadReport(t, fixture)
	a := &rep.Arms[0]
	if len(a.Timeline) < 10 {
		t.Fatalf("the fixture's arm has %d rows; want 10 or more", len(a.Timeline))
	}
	a.LB = &result.LoadBalancer{Servers: map[string]*result.LBServer{"api-1": {}, "api-2": {}}}
	for i := range a.Timeline {
		w := map[int]int64{0: 0, 1: 50, 2: 100}[min(i/4, 2)] // api-2 away, ramping, back
		a.Timeline[i].LBWeights = map[string]int64{"api-1": 100, "api-2": w}
	}
	a.Timeline[3].LBWeights = nil
	rep.Arms[1].LB = &result.LoadBalancer{Servers: map[string]*result.LBServer{"api-1": {}}}
	_, doc := renderHTML(t, rep)
	key := "lb_weights-" + a.Name
	svgs := find(doc, "svg", map[string]string{"data-chart": key})
	if len(svgs) != 1 {
		t.Fatalf("%d charts %s; want 1", len(svgs), key)
	}
	var labels []string
	for _, n := range find(svgs[0], "text", map[string]string{"text-anchor": "end"}) {
		labels = append(labels, n.FirstChild.Data)
	}
	if len(labels) == 0 || labels[len(labels)-1] != "100" {
		t.Errorf("chart %s: y labels %v; want the top at 100, the weight as a level", key, labels)
	}
	top, bottom := coord(plotTop), coord(plotBottom)
	for server, want := range map[string]struct {
		subpaths int
		from     string
	}{"api-1": {2, top}, "api-2": {2, bottom}} {
		paths := find(doc, "path", map[string]string{"class": "series", "data-chart": key, "data-arm": server})
		if len(paths) != 1 {
			t.Fatalf("chart %s: %d series for %s; want 1", key, len(paths), server)
		}
		d, _ := attr(paths[0], "d")
		first := strings.Fields(d)[1]
		if n := strings.Count(d, "M"); n != want.subpaths || first != want.from {
			t.Errorf("%s's weight: path %q; want %d subpaths (a gap at the row without weights), from y %s", server, d, want.subpaths, want.from)
		}
		if server == "api-2" && !strings.Contains(d, "V"+top) {
			t.Errorf("api-2's weight: path %q; want it up to 100 (y %s) once back", d, top)
		}
	}
	if n := len(find(doc, "svg", map[string]string{"data-chart": "lb_weights-" + rep.Arms[1].Name})); n != 0 {
		t.Errorf("arm %s's rows carry no weights, and it has %d charts of them", rep.Arms[1].Name, n)
	}
}
