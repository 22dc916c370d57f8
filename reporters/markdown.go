package reporters

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/gates"
)

// Markdown writes the report for a pull-request comment or a CI step summary
// (GitHub-flavoured Markdown): a one-line header (trigger, seed,
// environment), the load, the arms side by side as the terminal table shows
// them, the arms a stop condition ended early, and every gate with what it
// measured, what it expected and whether it passed. Arm names and
// expressions are code spans; other text is escaped, so no name can break
// the table or the markup. The output depends only on rep.
func Markdown(w io.Writer, rep *experiment.Report) error {
	b := bufio.NewWriter(w)
	p, e := rep.Plan, rep.Environment
	fmt.Fprintf(b, "### herdbench: %s trigger, seed %d, %s\n\n", code(p.Trigger), rep.Seed, mdText(environmentLine(e)))
	fmt.Fprintf(b, "%s\n\n", mdText(loadLine(p)))
	if rep.Partial {
		fmt.Fprintf(b, "> [!WARNING]\n> Partial results: not every arm finished: %s\n\n", mdText(rep.Error))
	}

	s := summarize(rep)
	mdTable(b, s.head, s.rows, false)
	if s := repeatNote(rep); s != "" {
		fmt.Fprintf(b, "%s\n\n", mdText(s))
	}
	if fewest, fastest, dropped, ok := best(rep); ok {
		fmt.Fprintf(b, "Fewest DB queries after T: %s (%s); lowest p99: %s (%s).",
			code(fewest.Name), thousands(fewest.DB.Queries), code(fastest.Name), mdText(msString(fastest.HTTP.P99MS)))
		if n := droppedNote(dropped); n != "" {
			fmt.Fprintf(b, " %s.", mdText(sentence(n)))
		}
		fmt.Fprint(b, "\n\n")
	}
	for _, l := range dbLines(rep) {
		fmt.Fprintf(b, "**%s:** %s.\n\n", l.label, mdText(l.text))
	}

	for _, d := range details(rep) {
		fmt.Fprintf(b, "%s:\n\n", d.intro)
		mdTable(b, d.head, d.rows, true)
	}

	if s := saturation(rep); s != "" {
		fmt.Fprintf(b, "**Warning:** %s.\n\n", mdText(s))
	}
	if s := lateness(rep); s != "" {
		fmt.Fprintf(b, "**Warning:** %s.\n\n", mdText(s))
	}

	if ab := aborted(rep); len(ab) > 0 {
		b.WriteString("**Stopped early by a stop condition:**\n\n")
		for _, a := range ab {
			fmt.Fprintf(b, "- %s at %s by %s: %s\n", code(a.Name), mdText(offset(a.Aborted.AtMS)),
				code(a.Aborted.Gate), mdText(a.Aborted.Reason))
		}
		b.WriteString("\n")
	}

	if len(rep.Gates) > 0 {
		b.WriteString("**Gates:**\n\n")
		mdRow(b, []string{"gate", "arm", "measured", "expected", "result"})
		mdRow(b, []string{":---", ":---", "---:", ":---", ":---"})
		for _, g := range rep.Gates {
			mdRow(b, []string{codeCell(g.Gate), codeCell(g.Arm), mdText(Measured(g)), codeCell(Expected(g)), mdPass(g.Pass)})
		}
		b.WriteString("\n")
		if n := gates.Failed(rep.Gates); n > 0 {
			fmt.Fprintf(b, "**%d of %d gates failed.**\n", n, len(rep.Gates))
		} else {
			fmt.Fprintf(b, "All %d gates passed.\n", len(rep.Gates))
		}
	}
	return b.Flush()
}

// environmentLine is where the experiment ran, in one line.
func environmentLine(e experiment.Environment) string {
	return fmt.Sprintf("%s, %d replicas, %s, %d CPUs, %s %s, herdbench %s",
		e.Provider, e.Replicas, stores(e), e.CPUs, e.Go, e.OS, e.Herdbench)
}

// stores are the testbed's cache and database, with their versions:
// Redis and PostgreSQL, or Memcached (Redis beside it keeps the write
// queue) and MariaDB.
func stores(e experiment.Environment) string {
	cache := "Redis " + e.Redis
	if e.Memcached != "" {
		cache = "Memcached " + e.Memcached + " (Redis " + e.Redis + " for the write queue)"
	}
	if e.MariaDB != "" {
		return cache + ", MariaDB " + e.MariaDB
	}
	return cache + ", PostgreSQL " + e.Postgres
}

// loadLine is the plan's load and timeline, in one line.
func loadLine(p plan.Plan) string {
	s := fmt.Sprintf("%s req/s over %s keys (Zipf %g, %d hot), %d clients, client timeout %s",
		thousands(int64(p.Rate)), thousands(int64(p.Keys)), p.Zipf, p.HotKeys, max(p.Clients, 1), p.Timeout)
	if p.Critical > 0 {
		s += fmt.Sprintf(", %g%% critical", p.Critical*100)
	}
	return s + fmt.Sprintf("; warmup %s, before %s, T, after %s per arm%s", p.Warmup, p.Before, plan.AfterValue{P: &p}, repeatLine(p))
}

func mdRow(w io.Writer, cells []string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// mdEscaper backslash-escapes the punctuation that could start markup
// (emphasis, links, HTML, tables, entities); CommonMark renders an escaped
// punctuation character as itself.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `|`, `\|`, `~`, `\~`, `&`, `\&`, `#`, `\#`,
	"\r", " ", "\n", " ",
)

// mdText is s as literal Markdown text.
func mdText(s string) string { return mdEscaper.Replace(s) }

// code is s as an inline code span, fenced with more backticks than any run
// of them inside s.
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.Trim(s, " ") == "" {
		s = " " + s + " " // CommonMark strips one space each side
	}
	return fence + s + fence
}

// codeCell is a code span inside a table cell, where a pipe ends the cell
// even inside code unless escaped (GitHub renders \| in a cell as |).
func codeCell(s string) string {
	return strings.ReplaceAll(code(s), "|", `\|`)
}

// mdTable writes a table whose first column is the arm's name, as a code
// span, and the others right-aligned figures; with lastText, the last
// column is text, left-aligned.
func mdTable(b *bufio.Writer, head []string, rows [][]string, lastText bool) {
	cells := make([]string, len(head))
	align := make([]string, len(head))
	for i, h := range head {
		cells[i], align[i] = mdText(h), "---:"
	}
	align[0] = ":---"
	if lastText {
		align[len(align)-1] = ":---"
	}
	mdRow(b, cells)
	mdRow(b, align)
	for _, row := range rows {
		cells := make([]string, len(row))
		cells[0] = codeCell(row[0])
		for i, c := range row[1:] {
			cells[i+1] = mdText(c)
		}
		mdRow(b, cells)
	}
	b.WriteString("\n")
}
