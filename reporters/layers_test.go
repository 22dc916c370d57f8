package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/edge"
)

// A two-tier run's table has the layers under the arms: each layer's
// count, each amplification, the end-to-end one against the first arm's,
// and the edges' policy; a one-tier run's has none (the goldens).
func TestTableShowsTheLayers(t *testing.T) {
	rep := layersReport()
	var b bytes.Buffer
	if err := Table(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"client requests", "A to B", "DB per request", "A's policy",
		"3.00x", "27.000", "9,000", "27,000",
		"0.300 (-99%)", "breaker 5:2s", "timeout 500ms, retry immediate:2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The Markdown report has the same layers table, the policy as text.
func TestMarkdownShowsTheLayers(t *testing.T) {
	l := &result.Layers{Requests: 10, ClientAttempts: 10, Edge: 10, EdgeAttempts: 30, API: 30, DBAttempts: 90, EndToEnd: 9}
	rep := &experiment.Report{Arms: []result.ArmResult{{Name: "everywhere", Layers: l,
		Edge: &result.EdgeTier{Config: edge.Config{Timeout: herd.Duration(500_000_000)}}}}}
	var b bytes.Buffer
	if err := Markdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Layer by layer", "| `everywhere` | 10 | 10 | 10 | 30 | 30 | 90 |", "| 9.000 | timeout 500ms, retry none |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, b.String())
		}
	}
}
