package service

import (
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// A service answers for itself what the command line would otherwise ask
// with "is this the testbed?": the testbed's options refused beside it,
// its arms its own or a client's, a host it may not touch refused, and
// what of it listens on loopback.
func TestAServiceAnswersForItself(t *testing.T) {
	svc, err := targets.FromURL("http://127.0.0.1:8080/items/{key}")
	if err != nil {
		t.Fatal(err)
	}
	k := Kind{Svc: svc}
	g := plan.Given{Plan: plan.Plan{Trigger: "expire", Triggers: triggers.Default()},
		StartSet: []string{"replicas"}, KnobsSet: map[string]bool{"ttl": true}}
	_, bad := k.Plan(g)
	if len(bad) != 2 || bad[0].Field != "replicas" || bad[1].Field != "ttl" || !strings.Contains(bad[0].Msg, "starts the bundled testbed") {
		t.Errorf("Plan with --replicas and --ttl = %v; want both refused, the testbed's", bad)
	}
	for _, c := range []struct {
		arm  string
		want string // a problem's words; "": taken
	}{
		{"baseline", ""},
		{"retry=immediate:2", ""},
		{"lock", "not an arm of"},
	} {
		g := plan.Given{Arms: []string{c.arm}, ArmsSet: true}
		p, bad := k.Arms(plan.Plan{Triggers: triggers.Default()}, g)
		switch {
		case c.want == "" && (len(bad) > 0 || len(p.Arms) != 1):
			t.Errorf("Arms(%s) = %v, %v; want it taken", c.arm, p.Arms, bad)
		case c.want != "" && (len(bad) != 1 || !strings.Contains(bad[0].Msg, c.want)):
			t.Errorf("Arms(%s) = %v; want %q", c.arm, bad, c.want)
		}
	}
	if err := k.Hosts(plan.Plan{Triggers: triggers.Default()}, plan.Given{}); err != nil {
		t.Errorf("Hosts on loopback = %v; want nil", err)
	}
	if got := k.Local(); got != "http://127.0.0.1:8080" {
		t.Errorf("Local() = %q; want the loopback endpoint", got)
	}
}
