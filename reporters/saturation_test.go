package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// A run whose generator fell behind says so in every report a person
// reads, naming the arms and the worst figures; one that kept up says
// nothing.
func TestSaturationWarning(t *testing.T) {
	rep := loadReport(t, "testdata/results.json")
	for _, f := range []func() (string, error){
		func() (string, error) { var b bytes.Buffer; err := Table(&b, rep); return b.String(), err },
		func() (string, error) { var b bytes.Buffer; err := Markdown(&b, rep); return b.String(), err },
		func() (string, error) {
			var b bytes.Buffer
			err := HTML(&b, []*experiment.Report{rep})
			return b.String(), err
		},
	} {
		if out, err := f(); err != nil || strings.Contains(out, "bottleneck") {
			t.Errorf("a run that kept its schedule warns (%v):\n%s", err, out)
		}
	}
	rep.Arms[1].Load = result.LoadFigures{Intended: 100_000, Sent: 17_038, LagP90MS: 4560, LagP99MS: 4800, Saturated: true}
	rep.Arms[2].Load = result.LoadFigures{Intended: 100_000, Sent: 99_500, LagP90MS: 12, LagP99MS: 15, Saturated: true}
	want := "the load generator, not the service, was the bottleneck in " + rep.Arms[1].Name + ", " + rep.Arms[2].Name +
		": lag p90 4.56s, and it sent only 17.04% of the intended requests (the unsent count as dropped) (saturated past 10ms of lag at p90 or under 99.00% sent)"
	var table, md bytes.Buffer
	if err := Table(&table, rep); err != nil || !strings.Contains(table.String(), "warning   "+want) {
		t.Errorf("table (%v):\n%s\nwant the line %q", err, table.String(), want)
	}
	if err := Markdown(&md, rep); err != nil || !strings.Contains(md.String(), "**Warning:** "+mdText(want)) {
		t.Errorf("markdown (%v):\n%s\nwant %q", err, md.String(), want)
	}
	page, _ := renderHTML(t, rep)
	if !strings.Contains(page, `<p class="warning"><strong>Warning:</strong> `) || !strings.Contains(page, "17.04% of the intended requests") {
		t.Errorf("html has no warning paragraph with the figures")
	}
}

// A generator that sent everything, late, is not said to have dropped any.
func TestSaturationWarningWithoutUnsent(t *testing.T) {
	rep := loadReport(t, "testdata/results.json")
	rep.Arms[0].Load = result.LoadFigures{Intended: 3000, Sent: 3000, LagP90MS: 197.8, LagP99MS: 250, Saturated: true}
	var b bytes.Buffer
	if err := Table(&b, rep); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "bottleneck in "+rep.Arms[0].Name+": lag p90 197.8ms (saturated") || strings.Contains(out, "unsent") {
		t.Errorf("table:\n%s\nwant the lag, and no word of unsent requests", out)
	}
}

// A generator that keeps up on most requests and falls behind at T is not
// saturated, but its lag is part of the p99 it reports: the arm whose lag
// p99 is a material share of its p99 (experiment.MaterialLagShare) has its
// p99 marked and a warning naming the share; under that share, nothing.
func TestLatenessWarning(t *testing.T) {
	rep := loadReport(t, "testdata/results.json")
	for i := range rep.Arms { // the service's p99 alone: lag well under a tenth
		rep.Arms[i].Load.LagP99MS = rep.Arms[i].HTTP.P99MS * 0.09
	}
	var quiet bytes.Buffer
	if err := Table(&quiet, rep); err != nil || strings.Contains(quiet.String(), "sending lag") || strings.Contains(quiet.String(), " *") {
		t.Errorf("lag p99 at 9%% of p99 is flagged (%v):\n%s", err, quiet.String())
	}
	a := &rep.Arms[1]
	a.HTTP.P99MS, a.Load.LagP99MS, a.Load.LagP90MS = 505, 141, 0.2
	want := "* herdbench's own sending lag is a material share of the p99 in " + a.Name + ": at worst " + a.Name +
		", lag p99 141.0ms of p99 505.0ms (27.92%)"
	var table, md bytes.Buffer
	if err := Table(&table, rep); err != nil || !strings.Contains(table.String(), "warning   "+want) || !strings.Contains(table.String(), "505.0ms *") {
		t.Errorf("table (%v):\n%s\nwant the p99 marked and the line %q", err, table.String(), want)
	}
	if strings.Contains(table.String(), "bottleneck") {
		t.Errorf("table:\n%s\nwant no saturation: the lag's p90 is 0.2 ms", table.String())
	}
	if err := Markdown(&md, rep); err != nil || !strings.Contains(md.String(), mdText(want)) {
		t.Errorf("markdown (%v):\n%s\nwant %q", err, md.String(), want)
	}
	if page, _ := renderHTML(t, rep); !strings.Contains(page, "27.92%") {
		t.Errorf("html has no warning with the share")
	}
}
