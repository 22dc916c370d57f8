package subject_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// An edge arm and a gate on the edge tier's figures need a testbed of two
// tiers: on one they are refused before anything runs, each naming what
// would take it; on two they pass. An edge arm's values are checked as the
// edges would check them.
func TestValidateForTiers(t *testing.T) {
	one := subject.Describe(testbed.Status{Provider: "local", API: []string{"http://127.0.0.1:1"}})
	two := subject.Describe(testbed.Status{Provider: "local", API: []string{"http://127.0.0.1:1"}, Edge: []string{"http://127.0.0.1:2"}})
	p := func(arms []string, gate, abort string) plan.Plan {
		p := plan.Plan{Arms: subject.ArmKinds.Arms(arms, replica.FullPatch(replica.DefaultConfig)), Trigger: "expire", HotKeys: 1, Keys: 10, Zipf: 1.1, Rate: 10, Clients: 1,
			Timeout: herd.Duration(time.Second), Before: herd.Duration(time.Second), After: herd.Duration(time.Second)}
		if gate != "" {
			g, err := gates.Parse(gate)
			if err != nil {
				t.Fatal(err)
			}
			p.Gates = []gates.Gate{g}
		}
		if abort != "" {
			g, err := gates.Parse(abort)
			if err != nil {
				t.Fatal(err)
			}
			p.Abort = []gates.Gate{g}
		}
		return p
	}
	tests := []struct {
		name  string
		p     plan.Plan
		field string
		want1 string // on one tier; "" passes
		want2 string // on two tiers
	}{
		{"an edge arm", p([]string{"none", "edge-retry=immediate:2"}, "", ""), "arms",
			"sets the edge replicas' policy, and testbed has no edge tier (accepted: a testbed started with --tiers 2, by testbed up or by the run)", ""},
		{"a gate on layers", p([]string{"none"}, "layers.end_to_end < 2", ""), "gates",
			"layers.end_to_end is a figure of the edge tier, and testbed has none (accepted: a path outside edge.* and layers.*, or a testbed started with --tiers 2, by testbed up or by the run)", ""},
		{"a gate on the edges' counters", p([]string{"none"}, "edge.counters.attempts < 2", ""), "gates",
			"edge.counters.attempts is a figure of the edge tier", ""},
		{"a stop condition on layers, unknown to stop conditions", p([]string{"none"}, "", "layers.end_to_end > 2"), "abort_on",
			`unknown path "layers.end_to_end"`, `unknown path "layers.end_to_end"`},
		{"a stop condition on the verdict", p([]string{"none"}, "", "verdict == metastable"), "abort_on", "", ""},
		{"a stop condition on the verdict with !=", p([]string{"none"}, "", "verdict != recovered"), "abort_on",
			"a stop condition on the verdict takes == (accepted: verdict == one of recovered, metastable, overloaded; an arm is recovering until it is decided)",
			"a stop condition on the verdict takes =="},
		{"a stop condition on recovering", p([]string{"none"}, "", "verdict == recovering"), "abort_on",
			`unknown verdict "recovering" (accepted: recovered, metastable, overloaded)`, `unknown verdict "recovering"`},
		{"a gate on a series of a target that declares none", p([]string{"none"}, "prometheus.loads.max < 5", ""), "gates",
			"prometheus.loads.max names a series, and testbed declares none (accepted: a target file whose prometheus: section names its series)",
			"prometheus.loads.max names a series, and testbed declares none"},
		{"a series' aggregate unknown", p([]string{"none"}, "prometheus.loads.p99 < 5", ""), "gates",
			`"p99" is not how a series becomes a figure (accepted: prometheus.NAME.AGG, AGG one of max, min, mean, sum, last, over the after window)`,
			`"p99" is not how a series becomes a figure`},
		{"a stop condition on a series", p([]string{"none"}, "", "prometheus.loads.max > 5"), "abort_on",
			`unknown path "prometheus.loads.max"`, `unknown path "prometheus.loads.max"`},
		{"an edge arm out of range", p([]string{"none", "edge-bulkhead=-5"}, "", ""), "arms",
			"edge bulkhead: -5 out of range (accepted: 0, unbounded, to 100000)", "edge bulkhead: -5 out of range"},
		{"an edge arm's timeout of 0", p([]string{"none", "edge-timeout=0s"}, "", ""), "arms",
			"edge timeout: 0s out of range (accepted: 1ms to 1m)", "edge timeout: 0s out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for tiers, want := range map[int]string{1: tt.want1, 2: tt.want2} {
				tg := map[int]*subject.Testbed{1: one, 2: two}[tiers]
				err := tt.p.ValidateFor(tg.Target, tg)
				switch fe := herd.Fields(err); {
				case want == "" && err != nil:
					t.Errorf("ValidateFor(%d tiers) = %v; want nil", tiers, err)
				case want == "":
				case err == nil || fe[0].Field != tt.field || !strings.Contains(fe[0].Msg, want):
					t.Errorf("ValidateFor(%d tiers) = %v; want first a problem of %s containing %q", tiers, err, tt.field, want)
				case tt.field != "arms" && len(fe) != 1:
					t.Errorf("ValidateFor(%d tiers) = %v; want one problem, said once", tiers, err)
				}
			}
		})
	}
}
