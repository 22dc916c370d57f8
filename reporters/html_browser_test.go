package reporters

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/herdbench/herdbench/experiment"
)

// chromium finds the browser, Debian's package chromium. Without it the
// browser test skips on a laptop and fails in CI, where .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must have it: .ci/run installs it")
	}
	t.Skip(msg)
	return ""
}

// browserChart is what the page's script reads of one chart.
type browserChart struct {
	Report string         `json:"report"`
	Chart  string         `json:"chart"`
	Width  float64        `json:"width"`
	T      int            `json:"t"`      // T markers
	Counts map[string]int `json:"counts"` // arm -> path.series[data-arm=arm]
	Paths  []struct {
		Arm    string  `json:"arm"`
		D      string  `json:"d"`
		Length float64 `json:"length"` // getTotalLength(): 0 when the browser could not parse d
	} `json:"paths"`
}

// The page loads in headless Chromium from a file with no console error,
// no exception and no request beyond the file itself, and every arm's
// series is drawn in each chart of each report.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	expire := loadReport(t, fixture)
	// a second report, as `herdbench report` renders one per trigger, with
	// an arm whose name needs escaping in a selector and in HTML
	ttl := loadReport(t, fixture)
	ttl.Plan.Trigger = "ttl"
	ttl.Arms = ttl.Arms[:3]
	ttl.Arms[2].Name = `retry=exp:50ms:500ms:2 "<b>"`
	reps := []*experiment.Report{expire, ttl}

	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := HTML(f, reps); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// The deadline bounds the whole browser session; waits inside it poll.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox, // these machines run tests as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// no network here: without these Chromium keeps dialing Google's hosts
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
	)
	defer cancelAlloc() // waits for the browser process to end
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	// Listen sees every event that arrives before the reply to a later
	// command, so once the last Evaluate returns, every message the page
	// wrote while loading and drawing has been seen.
	if err := chromedp.Listen(browser, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				problem("console.%s: %s", e.Type, consoleArgs(e.Args))
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			problem("exception: %s %s at %s:%d", d.Text, consoleArgs([]*runtime.RemoteObject{d.Exception}), d.URL, d.LineNumber)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				problem("log error (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				problem("request to %s: the page must load nothing", u)
			}
		}
	}); err != nil {
		t.Fatalf("start chromium %s: %v", bin, err)
	}

	arms := map[string][]string{}
	for i, rep := range reps {
		for _, a := range rep.Arms {
			arms[fmt.Sprintf("r%d", i+1)] = append(arms[fmt.Sprintf("r%d", i+1)], a.Name)
		}
	}
	armsJSON, err := json.Marshal(arms)
	if err != nil {
		t.Fatal(err)
	}
	// count path.series[data-arm=...] per chart with the selector a reader
	// would write, and read back each path as the browser parsed it
	script := `(() => {
		const arms = ` + string(armsJSON) + `;
		return Array.from(document.querySelectorAll('svg.chart')).map(svg => {
			const report = svg.dataset.report, chart = svg.dataset.chart;
			const counts = {};
			for (const arm of arms[report] || []) {
				counts[arm] = svg.querySelectorAll('path.series[data-arm="' + CSS.escape(arm) + '"][data-chart="' + CSS.escape(chart) + '"]').length;
			}
			return {
				report, chart, counts,
				width: svg.getBoundingClientRect().width,
				t: svg.querySelectorAll('line.t-marker').length,
				paths: Array.from(svg.querySelectorAll('path.series')).map(p => ({
					arm: p.dataset.arm, d: p.getAttribute('d') || '', length: p.getTotalLength(),
				})),
			};
		});
	})()`
	var charts []browserChart
	err = chromedp.Do(browser,
		chromedp.Navigate("file://"+page),
		// the page is static; wait, polling with a deadline, until it is
		// complete and its series are in the DOM
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.readyState === 'complete' && document.querySelectorAll('path.series').length > 0`,
				chromedp.WithPollingTimeout(30*time.Second))(ctx, tg)
			return err
		}),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			charts, err = chromedp.Evaluate[[]browserChart](script)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatalf("load %s in chromium: %v", page, err)
	}

	if want := len(reps) * len(chartKeys); len(charts) != want {
		t.Errorf("the page has %d charts; want %d (%d reports x %v)", len(charts), want, len(reps), chartKeys)
	}
	for _, c := range charts {
		if c.T != 1 {
			t.Errorf("%s %s: %d T markers; want 1", c.Report, c.Chart, c.T)
		}
		if c.Width <= 0 {
			t.Errorf("%s %s: the chart is %g px wide; want it laid out", c.Report, c.Chart, c.Width)
		}
		for _, arm := range arms[c.Report] {
			if c.Counts[arm] != 1 {
				t.Errorf("%s %s: %d path.series[data-arm=%q]; want 1", c.Report, c.Chart, c.Counts[arm], arm)
			}
		}
		if len(c.Paths) != len(arms[c.Report]) {
			t.Errorf("%s %s: %d series; want %d, one per arm", c.Report, c.Chart, len(c.Paths), len(arms[c.Report]))
		}
		for _, p := range c.Paths {
			if p.D == "" || p.Length <= 0 {
				t.Errorf("%s %s, arm %q: d = %.40q, length %g; want a drawn path", c.Report, c.Chart, p.Arm, p.D, p.Length)
			}
		}
	}
	mu.Lock()
	for _, p := range problems {
		t.Error(p)
	}
	mu.Unlock()

	// close the browser gracefully; cancelAlloc then waits for its exit
	if err := chromedp.Cancel(browser); err != nil {
		t.Errorf("close chromium: %v", err)
	}
}

// consoleArgs renders a console call's arguments for a failure message.
func consoleArgs(args []*runtime.RemoteObject) string {
	var s []string
	for _, a := range args {
		if a == nil {
			continue
		}
		if a.Description != "" {
			s = append(s, a.Description)
		} else {
			s = append(s, string(a.Value))
		}
	}
	return strings.Join(s, " ")
}
