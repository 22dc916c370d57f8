package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/triggers"
)

// A write herd on the testbed, under each write strategy: at T the burst
// lands on the hottest items; after the arm, Postgres holds every write
// the replicas acknowledged, and the default gate (no acknowledged write
// lost) passes on every arm.
func TestWriteHerdLosesNothingAcknowledged(t *testing.T) {
	tg := startTestbed(t, 2)
	var arms []Arm
	for _, s := range api.WriteStrategies {
		cfg := api.DefaultConfig
		cfg.WriteStrategy, cfg.CoalesceInterval = s, herd.Duration(200*time.Millisecond)
		arms = append(arms, Arm{Name: s, Config: cfg})
	}
	p := Plan{Arms: arms, Trigger: "writes", HotKeys: 10, Keys: 1000, Zipf: 1.1, Rate: 100,
		Timeout: herd.Duration(2 * time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(1500 * time.Millisecond), Seed: 3,
		Triggers: triggerOptions("write_burst", "300", "write_keys", "2")}
	rep, err := Run(context.Background(), p, Env{Target: tg})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Arms {
		d, ok := a.Trigger.Detail.(*triggers.WritesDetail)
		if !ok {
			t.Fatalf("%s: trigger detail %T; want *triggers.WritesDetail", a.Name, a.Trigger.Detail)
		}
		t.Logf("%s: %+v", a.Name, *d)
		if d.Sent != 300 || d.Acked != 300 || d.Applied != 300 || d.Lost != 0 || len(d.Items) != 2 {
			t.Errorf("%s: %+v; want 300 sent, acknowledged and applied to 2 items, none lost", a.Name, *d)
		}
	}
	var lostGates int
	for _, g := range rep.Gates {
		if g.Path == "trigger.detail.lost" {
			lostGates++
			if !g.Pass || g.Measured == nil || *g.Measured != 0 {
				t.Errorf("gate %s on %s: %+v; want it measured at 0 and passed", g.Gate, g.Arm, g)
			}
		}
	}
	if lostGates != len(arms) {
		t.Errorf("%d arms gated on lost writes; want the default gate on all %d", lostGates, len(arms))
	}
}
