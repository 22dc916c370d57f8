package reporters

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/triggers"
)

// writesReport is a write herd built by hand, one arm per write strategy:
// direct waits on locks, queue lags behind, coalesce loses 50
// acknowledged writes.
func writesReport() *experiment.Report {
	arm := func(name, strategy string, d triggers.WritesDetail, w result.WriteFigures) result.ArmResult {
		cfg := replica.DefaultConfig
		cfg.WriteStrategy = strategy
		return result.ArmResult{Name: name, Config: rawConfig(cfg), Trigger: result.TriggerResult{Name: "writes", Detail: &d}, Writes: &w}
	}
	steady := &result.SteadyWrites{Rate: 40, Acked: 110, HTTP: result.HTTP{Requests: 60, OK: 58, P99MS: 12.5}}
	return withPlan("writes", []result.ArmResult{
		reads(arm("direct", replica.WriteDirect, triggers.WritesDetail{Sent: 2000, Acked: 1990, P99MS: 640, Applied: 2100},
			result.WriteFigures{Steady: steady, Statements: 2100, Rows: 2100, LockWaitsPeak: 17}), 2310, 3.1, 412, 0.004, 1800),
		reads(arm("queue", replica.WriteQueue, triggers.WritesDetail{Sent: 2000, Acked: 2000, P99MS: 90, Applied: 2110},
			result.WriteFigures{Statements: 31, Rows: 40, QueueDepthPeak: 1800, Lag: &result.WriteLag{Count: 2110, P50MS: 700, P99MS: 1450}}), 240, 1.2, 9.8, 0, 0),
		reads(arm("coalesce", replica.WriteCoalesce, triggers.WritesDetail{Sent: 2000, Acked: 2000, P99MS: 30, Applied: 1950, Lost: 50},
			result.WriteFigures{Statements: 12, Rows: 24}), 221, 1.1, 8.7, 0, 0),
	})
}

// reads gives a hand-built arm the figures of its read load from T: the
// database queries, the p50 and p99, the drop rate and the recovery.
func reads(a result.ArmResult, queries int64, p50, p99, drop float64, recoveryMS int64) result.ArmResult {
	a.DB = &result.DB{Queries: queries, QueriesTotal: queries + 400, PeakQPS: float64(queries) / 2}
	a.HTTP = result.HTTP{Requests: 8000, OK: 8000 - int64(drop*8000), DropRate: drop, P50MS: p50, P99MS: p99}
	a.RecoveryMS = &recoveryMS
	return a
}

// layersReport is a two-tier run built by hand: retries at every layer
// multiply the load 27 times; a breaker at the edges cuts it below one.
func layersReport() *experiment.Report {
	layers := func(req, ca, e, ea, b, db, done int64) *result.Layers {
		l := result.Layers{Requests: req, ClientAttempts: ca, Edge: e, EdgeAttempts: ea, API: b, DBAttempts: db, DBQueries: done,
			ClientAmp: float64(ca) / float64(req), EdgeAmp: float64(ea) / float64(e), APIAmp: float64(db) / float64(b), EndToEnd: float64(db) / float64(req)}
		return &l
	}
	pol, _ := retry.Parse("immediate:2")
	return withPlan("expire", []result.ArmResult{
		reads(result.ArmResult{Name: "retry-everywhere", Config: rawConfig(replica.DefaultConfig), Layers: layers(1000, 3000, 3000, 9000, 9000, 27000, 26950),
			Edge: &result.EdgeTier{Config: edge.Config{Timeout: herd.Duration(500_000_000), Retry: pol}}}, 26950, 480, 1000, 0.31, 3900),
		reads(result.ArmResult{Name: "breaker", Config: rawConfig(replica.DefaultConfig), Layers: layers(1000, 1000, 1000, 300, 300, 300, 300),
			Edge: &result.EdgeTier{Config: edge.Config{Timeout: herd.Duration(500_000_000), Breaker: retry.Breaker{Failures: 5, Open: 2_000_000_000}}}}, 300, 2.2, 35, 0.02, 700),
	})
}

// withPlan is a report of arms with the plan and environment a stampede
// would record, so that its goldens read as a run's.
func withPlan(trigger string, arms []result.ArmResult) *experiment.Report {
	p := plan.Plan{Trigger: trigger, HotKeys: 10, Rate: 2000, Keys: 1000, Zipf: 1.1, Clients: 1,
		Timeout: herd.Duration(1e9), Warmup: herd.Duration(2e9), Before: herd.Duration(2e9), After: herd.Duration(4e9), Seed: 7}
	for _, a := range arms {
		p.Arms = append(p.Arms, arm.Arm{Name: a.Name, Knobs: patchOf(a.Config)})
	}
	return &experiment.Report{Seed: 7, Plan: p, Arms: arms, Environment: experiment.Environment{Provider: "local", Target: "testbed",
		Replicas: 3, Redis: "7.0.15", Postgres: "16.4", CPUs: 2, Go: "go1.26", OS: "linux/amd64", Herdbench: "dev", Replica: rawConfig(replica.DefaultConfig)}}
}

// roundTrip is rep as `herdbench report` reads it from results.json:
// encoded, then decoded strictly (a trigger's detail comes back typed, as the run wrote it).
func roundTrip(t *testing.T, rep *experiment.Report) *experiment.Report {
	t.Helper()
	var b bytes.Buffer
	if err := JSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	return decodeReport(t, "results", b.Bytes())
}

func htmlOne(w io.Writer, rep *experiment.Report) error { return HTML(w, []*experiment.Report{rep}) }

// The layers and the writes tables, read back from results, in the table,
// the Markdown and the HTML: testdata/golden/{layers,writes}.{txt,md,html}.
func TestGoldenDetails(t *testing.T) {
	for _, r := range []struct {
		name string
		rep  func() *experiment.Report
	}{{"layers", layersReport}, {"writes", writesReport}} {
		for ext, f := range map[string]func(io.Writer, *experiment.Report) error{"txt": Table, "md": Markdown, "html": htmlOne} {
			t.Run(r.name+"."+ext, func(t *testing.T) {
				var b bytes.Buffer
				if err := f(&b, roundTrip(t, r.rep())); err != nil {
					t.Fatal(err)
				}
				golden(t, r.name+"."+ext, b.Bytes())
			})
		}
	}
}

// The HTML has the layers and the writes tables with the cells the
// Markdown has, the arm's name as code; results without them have neither.
func TestHTMLShowsTheDetails(t *testing.T) {
	for _, build := range []func() *experiment.Report{layersReport, writesReport} {
		rep := roundTrip(t, build())
		ds := details(rep)
		if len(ds) != 1 {
			t.Fatalf("details(%s) = %d tables; want 1", rep.Plan.Trigger, len(ds))
		}
		d := ds[0]
		_, doc := renderHTML(t, rep)
		tables := find(doc, "table", map[string]string{"class": d.key})
		if len(tables) != 1 {
			t.Fatalf("%d tables of class %s; want 1", len(tables), d.key)
		}
		if got, want := cellTexts(find(tables[0], "th", nil)), strings.Join(d.head, "|"); got != want {
			t.Errorf("%s head = %s; want %s", d.key, got, want)
		}
		trs := find(find(tables[0], "tbody", nil)[0], "tr", nil)
		if len(trs) != len(rep.Arms) {
			t.Fatalf("%s has %d rows; want %d, one per arm", d.key, len(trs), len(rep.Arms))
		}
		for i, tr := range trs {
			if got, want := cellTexts(find(tr, "td", nil)), strings.Join(d.rows[i], "|"); got != want {
				t.Errorf("%s row %d = %s; want %s", d.key, i, got, want)
			}
			if n := len(find(tr, "code", nil)); n != 1 {
				t.Errorf("%s row %d has %d code elements; want 1, the arm's name", d.key, i, n)
			}
		}
	}
	_, doc := renderHTML(t, loadReport(t, fixture))
	for _, key := range []string{"layers", "writes"} {
		if n := len(find(doc, "table", map[string]string{"class": key})); n != 0 {
			t.Errorf("a run without %s has %d such tables; want none", key, n)
		}
	}
}

// cellTexts is the text of each cell, joined by |.
func cellTexts(cells []*html.Node) string {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = text(c)
	}
	return strings.Join(s, "|")
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}

// rawConfig is c as an arm's results carry it.
func rawConfig(c replica.Config) json.RawMessage {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}

// patchOf is what the arm that ran raw set: its strategy and write strategy.
func patchOf(raw json.RawMessage) herd.Settings {
	var c replica.Config
	if err := json.Unmarshal(raw, &c); err != nil {
		panic(err)
	}
	return replica.PatchOf(c, "strategy", "write_strategy")
}
