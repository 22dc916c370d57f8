package reporters

import (
	"fmt"
	"io"
	"strings"

	"github.com/herdbench/herdbench/baseline"
	"github.com/herdbench/herdbench/gates"
)

// Comparison writes a run against its baseline: each figure of each arm in
// both, its change, then every regression limit with pass or FAIL.
func Comparison(w io.Writer, c baseline.Comparison) error {
	fmt.Fprintf(w, "baseline  %s\nrun       %s\n", c.Baseline, c.Run)
	var rows [][]string
	for _, d := range c.Deltas {
		rows = append(rows, []string{d.Arm, d.Path, figure(d.Path, d.Old), figure(d.Path, d.New), cmpChange(d)})
	}
	if err := columns(w, []string{"arm", "figure", "baseline", "run", "change"}, rows); err != nil {
		return err
	}
	cmpNotes(w, c, "")
	if len(c.Checks) == 0 {
		return nil
	}
	rows, failed := nil, 0
	for _, ch := range c.Checks {
		rows = append(rows, []string{ch.Limit, ch.Arm, figure(ch.Path, ch.Old), figure(ch.Path, ch.New), figure(ch.Path, ch.Allowed), passFail(ch.Pass)})
		if !ch.Pass {
			failed++
		}
	}
	if err := columns(w, []string{"max regression", "arm", "baseline", "run", "allowed", "result"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "regressions %d of %d checks failed\n", failed, len(c.Checks))
	return nil
}

// ComparisonMarkdown writes the comparison for a pull-request comment.
func ComparisonMarkdown(w io.Writer, c baseline.Comparison) error {
	fmt.Fprintf(w, "### herdbench: run against its baseline\n\nbaseline %s, run %s\n\n", code(c.Baseline), code(c.Run))
	fmt.Fprintln(w, "| arm | figure | baseline | run | change |\n|---|---|---:|---:|---:|")
	for _, d := range c.Deltas {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", codeCell(d.Arm), codeCell(d.Path), figure(d.Path, d.Old), figure(d.Path, d.New), cmpChange(d))
	}
	cmpNotes(w, c, "\n")
	if len(c.Checks) > 0 {
		fmt.Fprintln(w, "\n| max regression | arm | baseline | run | allowed | result |\n|---|---|---:|---:|---:|---|")
		for _, ch := range c.Checks {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", codeCell(ch.Limit), codeCell(ch.Arm), figure(ch.Path, ch.Old), figure(ch.Path, ch.New), figure(ch.Path, ch.Allowed), mdPass(ch.Pass))
		}
	}
	return nil
}

// ComparisonJSON writes the comparison as indented JSON.
func ComparisonJSON(w io.Writer, c baseline.Comparison) error { return indented(w, c) }

func cmpNotes(w io.Writer, c baseline.Comparison, lead string) {
	if len(c.Missing) > 0 {
		fmt.Fprintf(w, "%snot in the run: %s\n", lead, strings.Join(c.Missing, ", "))
	}
	if len(c.Added) > 0 {
		fmt.Fprintf(w, "%snot in the baseline: %s\n", lead, strings.Join(c.Added, ", "))
	}
}

func cmpChange(d baseline.Delta) string {
	switch {
	case d.Change == nil:
		return "n/a"
	case d.Percent == nil:
		return figure(d.Path, d.Change)
	case gates.IsRatio(d.Path):
		return fmt.Sprintf("%+.2f pts", *d.Change*100)
	}
	return fmt.Sprintf("%+.1f%%", *d.Percent*100)
}
