package reporters

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/sweep"
)

// The sweep's fixtures are real sweeps of herdbench sweep on the latch
// server of cmd/herdbench/sweep_test.go (a service that latches into 503s
// over 30 requests in flight): testdata/sweep.json bisects burst=16..64
// with two runs a probe and two gates (one failing); sweep_grid.json maps
// burst=10,40 by rate=20,40.
const (
	sweepFixture = "testdata/sweep.json"
	gridFixture  = "testdata/sweep_grid.json"
)

// loadSweep decodes path strictly: a field the types do not know is an
// error, so the golden files cannot silently drop one.
func loadSweep(t *testing.T, path string) *sweep.Results {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var res sweep.Results
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return &res
}

func renderSweep(t *testing.T, path, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := RenderSweep(&b, format, loadSweep(t, path)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenSweep(t *testing.T) {
	for _, tt := range []struct{ fixture, format, golden string }{
		{sweepFixture, "table", "sweep.txt"},
		{sweepFixture, "markdown", "sweep.md"},
		{sweepFixture, "junit", "sweep.xml"},
		{sweepFixture, "html", "sweep.html"},
		{gridFixture, "table", "sweep_grid.txt"},
		{gridFixture, "html", "sweep_grid.html"},
	} {
		t.Run(tt.golden, func(t *testing.T) { golden(t, tt.golden, renderSweep(t, tt.fixture, tt.format)) })
	}
}

// The results decode into sweep.Results and encode back to the same
// bytes: no field of the herdbench.sweep/v1 contract is lost or renamed.
func TestGoldenSweepJSON(t *testing.T) {
	for _, path := range []string{sweepFixture, gridFixture} {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := renderSweep(t, path, "json"); !bytes.Equal(got, want) {
			t.Errorf("SweepJSON(decode(%s)) differs from the file: %s", path, firstDiff(got, want))
		}
	}
}

// The sweep's HTML loads nothing, and marks each run: a dot for a run that
// recovered, a cross for one that did not, red when its probe tipped.
func TestSweepHTMLOffline(t *testing.T) {
	res := loadSweep(t, sweepFixture)
	page := string(renderSweep(t, sweepFixture, "html"))
	for _, bad := range []string{"<script", "<link rel=\"stylesheet", "src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: it must load nothing", bad)
		}
	}
	var recovered, not, tipped int
	for _, p := range res.Arms[0].Probed {
		for _, r := range p.Runs {
			if r.RecoveryMS != nil {
				recovered++
			} else {
				not++
			}
			if p.Tipped {
				tipped++
			}
		}
	}
	if got := strings.Count(page, "<circle class=\"run"); got != recovered {
		t.Errorf("%d dots; want one per recovered run, %d", got, recovered)
	}
	if got := strings.Count(page, "<text class=\"run"); got != not {
		t.Errorf("%d crosses; want one per run that did not recover, %d", got, not)
	}
	if got := strings.Count(page, "class=\"run tipped\""); got != tipped || tipped == 0 {
		t.Errorf("%d runs marked tipped; want %d, the runs of the probes that tipped", got, tipped)
	}
	grid := string(renderSweep(t, gridFixture, "html"))
	if got := strings.Count(grid, "<rect class=\"cell\""); got != 4 {
		t.Errorf("the heat map has %d cells; want 4", got)
	}
}

// Every sweep format renders results with nothing in them.
func TestEmptySweep(t *testing.T) {
	for _, res := range []*sweep.Results{{}, {Vary: &sweep.Axis{Name: "burst", From: 1, To: 10}}} {
		for _, f := range FormatNames() {
			var b bytes.Buffer
			if err := RenderSweep(&b, f, res); err != nil || b.Len() == 0 {
				t.Errorf("%s(empty sweep) = %d bytes, %v; want output and no error", f, b.Len(), err)
			}
		}
	}
}

// A prediction found stands beside the measured tipping point: in the
// table, with how far it falls, and on the chart as a dashed line.
func TestSweepShowsThePredictionBesideTheTip(t *testing.T) {
	res := loadSweep(t, sweepFixture)
	v, off := 25.0, -0.167
	res.Arms[0].Predicted = &sweep.Predicted{State: sweep.PredictedFound, Value: &v, Unit: sweep.Count, Text: "25", VsMeasured: &off}
	var table, page bytes.Buffer
	if err := RenderSweep(&table, "table", res); err != nil {
		t.Fatal(err)
	}
	if err := RenderSweep(&page, "html", res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "30        25 (-17%)") || strings.Contains(table.String(), "not predicted") {
		t.Errorf("table:\n%s\nwant the measured 30 beside the predicted 25 (-17%%), and no note", table.String())
	}
	if got := strings.Count(page.String(), `<line class="p-marker"`); got != 1 || !strings.Contains(page.String(), "the model's tipping point: 25 (-17%)") {
		t.Errorf("%d dashed lines for the prediction; want one, titled with it", got)
	}
}

// With --escape, each probe whose runs were stuck carries the load they
// came back at: the table and markdown list them per arm, in the
// magnitude's order; a grid's cells add them; the page draws them under
// the tipping chart, a line through the probes that came back and a cross
// for one that did not. Without it nothing changes (the goldens above).
func TestSweepShowsTheEscapeLoad(t *testing.T) {
	res := loadSweep(t, sweepFixture)
	rps := func(v float64) *float64 { return &v }
	start := int64(3000)
	for i := range res.Arms[0].Probed {
		p := &res.Arms[0].Probed[i]
		if !p.Tipped {
			continue
		}
		p.EscapeTried = 1
		p.Runs[0].Result.Escape = &result.EscapeResult{FromRPS: 200, StartMS: &start}
		switch p.At[0].Text {
		case "30":
			p.EscapeRPS = rps(150)
		case "32":
			p.EscapeRPS = rps(100)
		}
	}
	var table, md, page bytes.Buffer
	for format, b := range map[string]*bytes.Buffer{"table": &table, "markdown": &md, "html": &page} {
		if err := RenderSweep(b, format, res); err != nil {
			t.Fatal(err)
		}
	}
	want := "escape    latch: burst=30 came back at 150/s; burst=32 came back at 100/s; burst=64 never came back\n"
	if !strings.Contains(table.String(), want) {
		t.Errorf("table:\n%s\nwant the escape load of each stuck probe, in the magnitude's order:\n%s", table.String(), want)
	}
	if !strings.Contains(md.String(), "escape load of `latch`: burst=30 came back at 150/s") {
		t.Errorf("markdown:\n%s\nwant the escape line", md.String())
	}
	html := page.String()
	if !strings.Contains(html, `data-chart="escape" data-arm="latch"`) || strings.Count(html, `<circle class="escape"`) != 2 ||
		strings.Count(html, `<text class="escape"`) != 1 || !strings.Contains(html, `<polyline class="escape" points="`) {
		t.Errorf("page: want an escape chart for latch, two probes back on a line and one cross")
	}

	grid := loadSweep(t, gridFixture)
	for i := range grid.Arms[0].Probed {
		if p := &grid.Arms[0].Probed[i]; p.Tipped {
			p.EscapeTried, p.EscapeRPS = 1, rps(120)
		}
	}
	var gt bytes.Buffer
	if err := RenderSweep(&gt, "table", grid); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gt.String(), "degraded, escape 120/s") {
		t.Errorf("grid table:\n%s\nwant each stuck cell's escape load", gt.String())
	}
}
