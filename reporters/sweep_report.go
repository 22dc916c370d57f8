package reporters

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/herdbench/herdbench/sweep"
)

// SweepMarkdown writes the sweep as GitHub-flavoured Markdown: what was
// swept, the arms' tipping points (or each arm's map of verdicts), the
// gates.
func SweepMarkdown(w io.Writer, res *sweep.Results) error {
	b := bufio.NewWriter(w)
	e := res.Environment
	fmt.Fprintf(b, "## herdbench sweep: %s\n\n", mdText(res.Plan.Trigger))
	fmt.Fprintf(b, "%s; seed %d; target %s (%s)\n\n", mdText(sweepLine(res)), res.Seed, mdText(e.Target), mdText(e.Provider))
	if s := sweepStatus(res); s != "" {
		fmt.Fprintf(b, "> **%s**\n\n", mdText(s))
	}
	if res.Vary != nil {
		head, rows := sweepRows(res)
		mdTable(b, head, rows, false)
		for _, n := range predictionNotes(res) {
			fmt.Fprintf(b, "- %s\n", mdText(n))
		}
		if len(predictionNotes(res)) > 0 {
			fmt.Fprintln(b)
		}
		for _, a := range res.Arms {
			if l := escapeLine(a); l != "" {
				fmt.Fprintf(b, "- escape load of %s: %s\n\n", codeCell(a.Name), mdText(l))
			}
		}
	} else {
		for _, a := range res.Arms {
			fmt.Fprintf(b, "### %s\n\n", codeCell(a.Name))
			head, rows := gridRows(res, a)
			mdTable(b, head, rows, false)
		}
	}
	if len(res.Gates) > 0 {
		mdTable(b, gateHead, gateRows(res), true)
	}
	return b.Flush()
}

// gateRows are the gates' rows: gate, arm, measured, pass or FAIL.
func gateRows(res *sweep.Results) [][]string {
	var rows [][]string
	for _, g := range res.Gates {
		rows = append(rows, []string{g.Gate, g.Arm, g.Measured, passFail(g.Passed)})
	}
	return rows
}

// SweepJUnit writes the sweep as JUnit XML: one testcase per gate on each
// arm (a failure says the tipping point measured), and an errored testcase
// when the sweep stopped early. Each arm's tipping point and bracket are
// the suite's properties.
func SweepJUnit(w io.Writer, res *sweep.Results) error {
	suite := junit.Testsuite{Name: "herdbench sweep " + res.Plan.Trigger, Package: "herdbench", Time: "0.000"}
	if !res.StartedAt.IsZero() {
		suite.Timestamp = res.StartedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	suite.AddProperty("seed", strconv.FormatUint(res.Seed, 10))
	suite.AddProperty("schema", res.Schema)
	suite.AddProperty("sweep", sweepLine(res))
	for _, a := range res.Arms {
		if a.Tipping != nil {
			suite.AddProperty("tipping:"+a.Name, a.Tipping.Text)
			suite.AddProperty("bracket:"+a.Name, sweep.BracketText(a.Bracket))
		}
	}
	class := "herdbench.sweep." + res.Plan.Trigger
	for _, g := range res.Gates {
		tc := junit.Testcase{Name: g.Gate + " [" + g.Arm + "]", Classname: class, Time: "0.000"}
		if !g.Passed {
			tc.Failure = &junit.Result{Message: "tipping point measured " + g.Measured, Type: "gate",
				Data: xmlChars(fmt.Sprintf("gate %s on arm %s: the tipping point measured %s", g.Gate, g.Arm, g.Measured))}
		}
		suite.AddTestcase(tc)
	}
	if res.Partial {
		suite.AddTestcase(junit.Testcase{Name: "the sweep finished", Classname: class, Time: "0.000",
			Error: &junit.Result{Message: sweepStatus(res), Type: "partial"}})
	}
	return writeSuite(w, suite)
}
