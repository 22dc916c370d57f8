package experiment_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// A run whose generator cannot keep its schedule says so: the requests it
// never sent count, as dropped, and the arm and the run are marked
// saturated; a run at a modest rate sends every request, and its flag is
// the rule applied to its own figures. The generator is held to one
// core here (GOMAXPROCS 1, shared with the server it attacks), where no
// machine sends MaxRate requests a second through net/http.
func TestASaturatedGeneratorSaysSo(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, tt := range []struct {
		rate      int
		procs     int
		saturated bool
	}{{200, runtime.GOMAXPROCS(0), false}, {plan.MaxRate, 1, true}} {
		tg, err := targets.FromURL(srv.URL + "/items/{key}")
		if err != nil {
			t.Fatal(err)
		}
		p := plan.Plan{Arms: []arm.Arm{{Name: "baseline", Select: &arm.Select{}}}, Trigger: "burst", Triggers: TriggerOptions("burst", "1"),
			HotKeys: 1, Keys: 10, Zipf: 1.1, Rate: tt.rate, Clients: 10, Timeout: herd.Duration(time.Second),
			Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second), Seed: 1}
		prev := runtime.GOMAXPROCS(tt.procs)
		rep, err := Run(context.Background(), p, Env{Target: tg, Subject: &service.Subject{Target: tg}})
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		a := rep.Arms[0]
		l, h := a.Load, a.HTTP
		t.Logf("rate %d on %d procs: load %+v; http requests %d, unsent %d, drop rate %.3f", tt.rate, tt.procs, l, h.Requests, h.Errors.Unsent, h.DropRate)
		if want := int64(3 * tt.rate); l.Intended < want-1 || l.Intended > want {
			t.Errorf("rate %d: load.intended %d; want %d, what 3s of the schedule owe", tt.rate, l.Intended, want)
		}
		var rows, unsent int64
		for _, r := range a.Timeline {
			rows += r.Requests
			unsent += r.Unsent
		}
		if rows != l.Intended || unsent != l.Intended-l.Sent {
			t.Errorf("rate %d: timeline rows hold %d requests, %d unsent; want load.intended %d, %d unsent", tt.rate, rows, unsent, l.Intended, l.Intended-l.Sent)
		}
		rule := l.LagP90MS > float64(SaturatedLag.Milliseconds()) || float64(l.Sent) < SaturatedSent*float64(l.Intended)
		if l.Saturated != rule || rep.Saturated != l.Saturated {
			t.Errorf("rate %d: load.saturated %v, report saturated %v; want both %v, the rule applied to %+v", tt.rate, l.Saturated, rep.Saturated, rule, l)
		}
		// saturation shows as requests never sent, or as requests sent
		// late: the generator's own attack path may send every one of the
		// 60,000 within the arm, a second late (CI once: 59,999 of 59,999
		// sent, lag p90 1,178 ms, none unsent)
		late := l.LagP90MS > float64(SaturatedLag.Milliseconds())
		if tt.saturated && (!l.Saturated || (h.Errors.Unsent == 0 && !late) || h.DropRate == 0 || h.OK+h.Errors.Unsent > h.Requests) {
			t.Errorf("rate %d: load %+v, http %+v; want saturated, its requests unsent or late, the unsent after T among the requests, dropped", tt.rate, l, h)
		}
		// A shared CI machine may take the core from the generator for a
		// few tens of milliseconds (lag p99); it never leaves a request of a
		// modest schedule unsent, nor most of them late.
		if !tt.saturated && (l.Sent != l.Intended || h.Errors.Unsent != 0 || l.LagP50MS >= float64(SaturatedLag.Milliseconds())) {
			t.Errorf("rate %d: load %+v, %d unsent; want every request sent, most on time", tt.rate, l, h.Errors.Unsent)
		}
	}
}

// The generator's figures are gate paths: a CI job can fail a run whose
// generator fell behind (--gate 'load.lag_p99_ms < 10').
func TestGeneratorFiguresAreGatePaths(t *testing.T) {
	paths := result.GatePaths()
	for _, want := range []string{"load.intended", "load.sent", "load.achieved_rate", "load.lag_p50_ms", "load.lag_p99_ms", "http.errors.unsent"} {
		if !slices.Contains(paths, want) {
			t.Errorf("GatePaths() lacks %s", want)
		}
	}
	g, err := gates.Parse("load.lag_p99_ms < 10")
	if err != nil {
		t.Fatal(err)
	}
	arms := []result.ArmResult{{Name: "on-time", Load: result.LoadFigures{LagP99MS: 0.4}}, {Name: "late", Load: result.LoadFigures{LagP99MS: 45, Saturated: true}}}
	res := result.CheckGates([]gates.Gate{g}, arms)
	if len(res) != 2 || !res[0].Pass || res[1].Pass {
		t.Errorf("gate load.lag_p99_ms < 10 on an arm on time and a late one = %+v; want pass, then fail", res)
	}
}
