package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/triggers"
)

// A write herd's table has one row per arm: the burst's and the steady
// writes' acknowledgements, the statements and lock waits in Postgres, the
// queue, the lag and what was lost, named; the Markdown report has the same.
func TestTableShowsTheWriteHerd(t *testing.T) {
	rep := writesReport()
	var b bytes.Buffer
	if err := Table(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"burst acked", "write stmts", "lock waits", "queue peak", "lag p99",
		"1,990 of 2,000", "58 of 60", "12.5ms", "2,100", "17", "1,800", "700.0ms", "1.45s", "50 LOST",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := Markdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"The write herd", "| `queue` | queue | 2,000 of 2,000 |", "50 LOST |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "feed rows") {
		t.Errorf("Markdown has a feed rows column without a fan-out:\n%s", b.String())
	}

	// with a fan-out, the feed rows each arm's likes wrote
	for i := range rep.Arms {
		d := rep.Arms[i].Trigger.Detail.(*triggers.WritesDetail)
		d.Followers, d.FeedRows = 100, 100*d.Applied
	}
	b.Reset()
	if err := Table(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"feed rows", "210,000 (100 per like)", "195,000 (100 per like)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table with a fan-out lacks %q:\n%s", want, b.String())
		}
	}
}
