package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/triggers"
)

// idlePlan is a sound plan, as the stampede's defaults, on arms.
func idlePlan(arms ...string) plan.Plan {
	return plan.Plan{Arms: arm.ClientKinds.Arms(arms, nil), Trigger: "expire", Clients: 100, Retry: retry.Policy{Kind: retry.None},
		HotKeys: 100, Rate: 1000, Keys: 10_000, Zipf: 1.1, Timeout: herd.Duration(time.Second),
		Warmup: herd.Duration(2 * time.Second), Before: herd.Duration(3 * time.Second), After: herd.Duration(8 * time.Second), Repeat: 1}
}

// TestIdleOptionsAreRefused pins what cannot take effect, each told with
// what it was and why (#41): a hedge the timeout ends first, a plan's
// policy every arm replaces, an arm the same as another, a fault or
// restart the after window ends before, an escape too short to start,
// and gates decided before the run.
func TestIdleOptionsAreRefused(t *testing.T) {
	gate := func(s string) []gates.Gate {
		g, err := gates.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return []gates.Gate{g}
	}
	for _, tt := range []struct {
		name string
		edit func(*plan.Plan)
		want string
	}{
		{"hedge past timeout", func(p *plan.Plan) { p.Hedge = retry.Hedge{Delay: 2 * time.Second, MaxErrorRate: .1} },
			"hedge: 2s is not below the timeout, 1s: each attempt ends at its timeout before the hedge would be sent"},
		{"arm hedge past timeout", func(p *plan.Plan) {
			*p = idlePlan("none", "hedge=2s")
			p.Timeout = herd.Duration(500 * time.Millisecond)
		}, "arms: hedge=2s: hedge=2s is not below the timeout, 500ms"},
		{"retry every arm replaces", func(p *plan.Plan) {
			*p = idlePlan("retry=immediate:1", "retry=fixed:1s:1")
			p.Retry = retry.Policy{Kind: retry.Immediate, Retries: 5}
		}, "retry: every arm sets its own retry (arms: retry=immediate:1, retry=fixed:1s:1), so it would do nothing"},
		{"throttle every arm replaces", func(p *plan.Plan) { *p = idlePlan("throttle=2", "throttle=3"); p.Throttle = 4 },
			"throttle: every arm sets its own throttle"},
		{"breaker every arm replaces", func(p *plan.Plan) {
			*p = idlePlan("client-breaker=5:1s", "client-breaker=3:1s")
			p.Breaker = retry.Breaker{Failures: 4, Open: time.Second}
		}, "client_breaker: every arm sets its own client breaker"},
		{"retry=none beside none", func(p *plan.Plan) { *p = idlePlan("none", "retry=none") }, "arms: retry=none: sets the clients' policies the plan gives every arm already (retry=none, throttle=0, hedge=none, client-breaker=none), so it changes nothing: it is the same as none"},
		{"throttle=0 beside none", func(p *plan.Plan) { *p = idlePlan("none", "throttle=0") }, "arms: throttle=0: sets the clients' policies"},
		{"client-breaker=none beside none", func(p *plan.Plan) { *p = idlePlan("none", "client-breaker=none") }, "it is the same as none"},
		{"lock+throttle=0 beside lock", func(p *plan.Plan) { *p = idlePlan("lock", "lock+throttle=0") }, "it is the same as lock"},
		{"write restart after the arm", func(p *plan.Plan) {
			p.Trigger, p.After, p.Triggers = "writes", herd.Duration(2*time.Second), triggers.Default()
			for k, v := range map[string]string{"write_restart": "api", "write_restart_after": "9s"} {
				if err := p.Triggers.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}, "write_restart_after: 9s is not shorter than after, 2s"},
		{"escape in a short after", func(p *plan.Plan) { p.Escape, p.After = &verdict.DefaultEscape, herd.Duration(time.Second) },
			"escape: after, 1s, is too short: an arm can be judged metastable no sooner than its settle time"},
		{"hedges without a hedge", func(p *plan.Plan) { p.Gates = gate("retries.hedges > 0") }, "retries.hedges counts the clients' hedged attempts, and no arm hedges"},
		{"throttled without throttling", func(p *plan.Plan) { p.Abort = gate("http.errors.throttled > 5") }, "abort_on: \"http.errors.throttled > 5\": http.errors.throttled counts the requests the clients' adaptive throttling refused, and no arm throttles"},
		{"client_breaker without one", func(p *plan.Plan) { p.Gates = gate("http.errors.client_breaker > 0") }, "and no arm has one"},
		{"amplification below 1", func(p *plan.Plan) { p.Gates = gate("retries.amplification < 0.5") }, "retries.amplification < 0.5 fails whatever the run does: retries.amplification is attempts per request, the first included, never below 1"},
		{"abort on amplification above 0.5", func(p *plan.Plan) { p.Abort = gate("retries.amplification > 0.5") }, "retries.amplification > 0.5 holds whatever the run does"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := idlePlan("none", "lock")
			tt.edit(&p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v; want it to say %q", err, tt.want)
			}
		})
	}
}

// TestIdleOptionsThatWorkAreKept: what does take effect passes.
func TestIdleOptionsThatWorkAreKept(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*plan.Plan)
	}{
		{"defaults", func(*plan.Plan) {}},
		{"hedge below the timeout", func(p *plan.Plan) { p.Hedge = retry.Hedge{Delay: 50 * time.Millisecond, MaxErrorRate: .1} }},
		{"retry=none alone, a named baseline", func(p *plan.Plan) { *p = idlePlan("retry=none", "retry=fixed:200ms:4") }},
		{"retry=none beside the plan's retry", func(p *plan.Plan) {
			*p = idlePlan("none", "retry=none")
			p.Retry = retry.Policy{Kind: retry.Immediate, Retries: 2}
		}},
		{"a plan's retry one arm takes", func(p *plan.Plan) {
			*p = idlePlan("none", "retry=fixed:1s:1")
			p.Retry = retry.Policy{Kind: retry.Immediate, Retries: 2}
		}},
		{"escape in the default after", func(p *plan.Plan) { p.Escape = &verdict.DefaultEscape }},
		{"amplification above 1", func(p *plan.Plan) {
			p.Gates = []gates.Gate{{Expr: "retries.amplification <= 2", Path: "retries.amplification", Op: "<=", Value: 2}}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := idlePlan("none", "lock")
			tt.edit(&p)
			if err := p.Validate(); err != nil {
				t.Errorf("Validate() = %v; want nil", err)
			}
		})
	}
}

// TestIdleOutlastingFaultOffersAfter: a fault not shorter than after carries
// after's side, so the command line can blame --after when the user set
// it and left the fault at its default.
func TestIdleOutlastingFaultOffersAfter(t *testing.T) {
	p := idlePlan("none", "lock")
	p.Trigger, p.After = "outage", herd.Duration(time.Second)
	var got *herd.FieldError
	for _, e := range herd.Fields(p.Validate()) {
		if e.Field == "outage" {
			got = e
		}
	}
	if got == nil || got.Other == nil || got.Other.Field != "after" || !strings.Contains(got.Other.Msg, "1s is not longer than outage's default, 2s") {
		t.Fatalf("Validate() outage problem = %+v; want one whose Other blames after against outage's default", got)
	}
	blamed := herd.FieldErrors{got}.Blame(func(f string) bool { return f == "after" })
	if blamed[0].Field != "after" {
		t.Errorf("Blame(after set) = %v; want after's", blamed[0])
	}
}
