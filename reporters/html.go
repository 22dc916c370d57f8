package reporters

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
)

//go:embed html.tmpl
var htmlTemplate string

// HTML writes one self-contained page for the reports, one section per
// report (one per trigger): DB q/s, p99 and drop rate over time for every
// arm on shared axes with T marked, a legend, the arms side by side, the
// layers and writes tables when some arm has them, the gates, the arms a
// stop condition ended, and the plan and environment.
//
// The page renders offline: its CSS is inline, its charts are inline SVG,
// and it loads nothing (no script, font, image or stylesheet). Every
// series is a <path class="series" data-report="rN" data-chart="db_qps|
// p99_ms|drop_rate" data-arm="NAME"> so tests and readers can find each
// arm's line. All text from the reports is escaped by html/template. The
// output depends only on reps: no render time, stable order, fixed number
// formats.
func HTML(w io.Writer, reps []*experiment.Report) error {
	if len(reps) == 0 {
		return errors.New("html report: no results (accepted: one or more reports)")
	}
	page := htmlPage{}
	var triggers []string
	for i, rep := range reps {
		if rep == nil {
			return fmt.Errorf("html report: report %d of %d is nil", i+1, len(reps))
		}
		r, err := newHTMLReport(fmt.Sprintf("r%d", i+1), rep)
		if err != nil {
			return fmt.Errorf("html report: %s: %w", rep.Plan.Trigger, err)
		}
		page.Reports = append(page.Reports, r)
		triggers = append(triggers, rep.Plan.Trigger)
	}
	page.Title = "herdbench: " + strings.Join(triggers, ", ")
	return execute(w, "report", htmlTemplate, page, "html report")
}

// execute writes the template text, named name, on data to w, whole or
// not at all; what leads its errors.
func execute(w io.Writer, name, text string, data any, what string) error {
	t, err := template.New(name).Parse(text)
	if err != nil {
		return fmt.Errorf("%s: template: %w", what, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// The values below are the template's data: every figure is formatted here,
// so the template only places strings.

type htmlPage struct {
	Title   string
	Reports []htmlReport
}

type htmlReport struct {
	ID        string
	Trigger   string
	Seed      uint64
	StartedAt string
	Env       string
	Load      string
	Partial   bool
	Error     string
	Legend    []legendItem
	Charts    []chart
	Summary   htmlTable
	Note      string       // what a repeated run's figures are, under the summary
	Details   []htmlDetail // the layers and writes tables, when some arm has them
	Verdict   *verdictLine
	DBLines   [][2]string // label and text: the drain's share, how long the db worked above its baseline
	Warnings  []string    // the generator was the bottleneck, or late at the p99
	Aborted   []abortItem
	Gates     []gateRow
	Failed    int
	EnvKV     []kv
	PlanKV    []kv
	Knobs     knobTable
	PlanJSON  string
}

// htmlTable is one row per arm: the arm's name first, then figures,
// right-aligned, but for the column TextCol (when not 0), text as the
// Markdown aligns it.
type htmlTable struct {
	Class   string
	Head    []string
	Rows    [][]string
	TextCol int
}

// htmlDetail is a table under the summary with the line that introduces it.
type htmlDetail struct {
	Intro string
	Table htmlTable
}

type verdictLine struct{ Fewest, FewestQueries, Fastest, FastestP99, Dropped string }

type abortItem struct{ Arm, At, Gate, Reason string }

type gateRow struct {
	Gate, Arm, Measured, Expected string
	Pass                          bool
}

type kv struct{ Key, Value string }

// knobTable is every arm's configuration side by side: one row per knob,
// one column per arm, the cells that differ from the first arm marked.
type knobTable struct {
	Arms []string
	Rows []knobRow
}

type knobRow struct {
	Key   string
	Cells []knobCell
}

type knobCell struct {
	Value   string
	Differs bool
}

type legendItem struct {
	Arm, Color, Dash, Note string
}

// chart is one inline SVG: every arm's series over the same x range.
type chart struct {
	Key, Title, Source string
	Width, Height      int
	Left, Right        string // plot area, in SVG units
	Top, Bottom        string
	XTicks, YTicks     []tick
	TX                 string // x of T
	Series             []series
	Aborts             []abortMark
	Ends               []abortMark // where the trigger's cause ended (the load balancer's charts)
}

type tick struct{ Pos, Label string }

type series struct{ Arm, Color, Dash, D string }

type abortMark struct{ Arm, Color, X, Title string }

// palette is Okabe and Ito's colour-blind-safe set (yellow left out, too
// pale on white); past it, arms reuse the colours with dashes.
var palette = [...]string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#444444"}

// paletteNames name palette's colours, in its order, for a chart whose
// series the legend does not name.
var paletteNames = [...]string{"blue", "vermillion", "green", "pink", "orange", "sky blue", "grey"}

var dashes = [...]string{"", "6 3", "2 3"}

func armStyle(i int) (color, dash string) {
	return palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
}

func newHTMLReport(id string, rep *experiment.Report) (htmlReport, error) {
	r := htmlReport{
		ID: id, Trigger: rep.Plan.Trigger, Seed: rep.Seed,
		Env: environmentLine(rep.Environment), Load: loadLine(rep.Plan),
		Partial: rep.Partial, Error: rep.Error, Failed: gates.Failed(rep.Gates),
	}
	if !rep.StartedAt.IsZero() {
		r.StartedAt = rep.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for i, a := range rep.Arms {
		color, dash := armStyle(i)
		item := legendItem{Arm: a.Name, Color: color, Dash: dash}
		switch {
		case a.Aborted != nil:
			item.Note = "stopped at " + offset(a.Aborted.AtMS)
		case len(a.Timeline) == 0:
			item.Note = "no timeline"
		}
		r.Legend = append(r.Legend, item)
	}
	r.Charts = charts(rep)
	s := summarize(rep)
	r.Summary = htmlTable{Class: "summary", Head: s.head, Rows: s.rows}
	r.Note = repeatNote(rep)
	for _, d := range details(rep) {
		r.Details = append(r.Details, htmlDetail{d.intro, htmlTable{Class: d.key, Head: d.head, Rows: d.rows, TextCol: len(d.head) - 1}})
	}
	if fewest, fastest, dropped, ok := best(rep); ok {
		r.Verdict = &verdictLine{fewest.Name, thousands(fewest.DB.Queries), fastest.Name, msString(fastest.HTTP.P99MS), sentence(droppedNote(dropped))}
	}
	for _, l := range dbLines(rep) {
		r.DBLines = append(r.DBLines, [2]string{l.label, l.text})
	}
	for _, w := range []string{saturation(rep), lateness(rep)} {
		if w != "" {
			r.Warnings = append(r.Warnings, w)
		}
	}
	for _, a := range aborted(rep) {
		r.Aborted = append(r.Aborted, abortItem{a.Name, offset(a.Aborted.AtMS), a.Aborted.Gate, a.Aborted.Reason})
	}
	for _, g := range rep.Gates {
		r.Gates = append(r.Gates, gateRow{g.Gate, g.Arm, Measured(g), Expected(g), g.Pass})
	}
	var err error
	if r.EnvKV, err = flatten(rep.Environment); err != nil {
		return r, err
	}
	if r.PlanKV, err = planKV(rep.Plan); err != nil {
		return r, err
	}
	if r.Knobs, err = knobs(rep.Arms); err != nil {
		return r, err
	}
	js, err := json.MarshalIndent(rep.Plan, "", "  ")
	if err != nil {
		return r, err
	}
	r.PlanJSON = string(js)
	return r, nil
}

// planKV is the plan as key/values in its JSON order, dotted paths for
// nested fields; arms are shown apart (knobs), and gates and stop
// conditions as their expressions.
func planKV(p plan.Plan) ([]kv, error) {
	all, err := flatten(p)
	if err != nil {
		return nil, err
	}
	var out []kv
	for _, e := range all {
		if strings.HasPrefix(e.Key, "arms") || strings.HasPrefix(e.Key, "gates") || strings.HasPrefix(e.Key, "abort_on") {
			continue
		}
		out = append(out, e)
	}
	exprs := func(key string, n int, expr func(int) string) {
		s := make([]string, n)
		for i := range s {
			s[i] = expr(i)
		}
		out = append(out, kv{key, cmp.Or(strings.Join(s, "; "), "none")})
	}
	exprs("gates", len(p.Gates), func(i int) string { return p.Gates[i].Expr })
	exprs("abort_on", len(p.Abort), func(i int) string { return p.Abort[i].Expr })
	return out, nil
}

// knobs lays the arms' configurations side by side, as each arm ran: the
// replicas' config and what its clients did.
func knobs(arms []result.ArmResult) (knobTable, error) {
	var t knobTable
	var keys []string
	values := make([]map[string]string, len(arms))
	for i, a := range arms {
		t.Arms = append(t.Arms, a.Name)
		var cfg any // a service's arm has no config of the subject's: no rows, rather than null
		if len(a.Config) > 0 {
			cfg = a.Config
		}
		kvs, err := flatten(struct {
			Config  any `json:"config,omitempty"`
			Clients any `json:"clients"`
		}{cfg, a.Clients})
		if err != nil {
			return t, err
		}
		values[i] = map[string]string{}
		for _, e := range kvs {
			if !slices.Contains(keys, e.Key) {
				keys = append(keys, e.Key)
			}
			values[i][e.Key] = e.Value
		}
	}
	for _, k := range keys {
		row := knobRow{Key: k}
		for i := range arms {
			v, ok := values[i][k]
			if !ok {
				v = "-"
			}
			row.Cells = append(row.Cells, knobCell{v, i > 0 && v != values[0][k]})
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// flatten is v's JSON as key/values in its field order: dotted paths for
// objects, [i] for arrays, null as "null".
func flatten(v any) ([]kv, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []kv
	var walk func(key string) error
	walk = func(key string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			n := 0
			for ; dec.More(); n++ {
				sub := fmt.Sprintf("%s[%d]", key, n)
				if t == '{' {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					sub = k.(string)
					if key != "" {
						sub = key + "." + sub
					}
				}
				if err := walk(sub); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return err
			}
			if n == 0 && key != "" {
				out = append(out, kv{key, map[json.Delim]string{'{': "{}", '[': "[]"}[t]})
			}
		case nil:
			out = append(out, kv{key, "null"})
		case string:
			out = append(out, kv{key, t})
		case json.Number:
			out = append(out, kv{key, t.String()})
		case bool:
			out = append(out, kv{key, strconv.FormatBool(t)})
		}
		return nil
	}
	return out, walk("")
}
