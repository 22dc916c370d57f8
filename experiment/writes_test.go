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
	likes := func() int64 { // read from Postgres here, apart from the trigger
		t.Helper()
		var n int64
		if err := tg.DB.QueryRow(context.Background(), `SELECT coalesce(sum(n), 0)::bigint FROM likes`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := likes()
	rep, err := Run(context.Background(), p, Env{Target: tg})
	if err != nil {
		t.Fatal(err)
	}
	var applied int64
	for _, a := range rep.Arms {
		d, ok := a.Trigger.Detail.(*triggers.WritesDetail)
		if !ok {
			t.Fatalf("%s: trigger detail %T; want *triggers.WritesDetail", a.Name, a.Trigger.Detail)
		}
		t.Logf("%s: %+v", a.Name, *d)
		applied += d.Applied
		if d.Sent != 300 || d.Acked != 300 || d.Applied != 300 || d.Lost != 0 || len(d.Items) != 2 {
			t.Errorf("%s: %+v; want 300 sent, acknowledged and applied to 2 items, none lost", a.Name, *d)
		}
	}
	if got := likes() - before; got != applied || got != int64(300*len(arms)) {
		t.Errorf("Postgres' likes rose by %d over the run; the arms applied %d; want %d each way", got, applied, 300*len(arms))
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
