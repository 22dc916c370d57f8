package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/triggers"
)

func TestFaultMustEndWithinTheArm(t *testing.T) {
	p := plan.Plan{Arms: arm.ClientKinds.Arms([]string{"none"}, replica.FullPatch(replica.DefaultConfig)), Trigger: "outage", HotKeys: 1, Keys: 10, Zipf: 1.1, Rate: 10, Clients: 1,
		Timeout: herd.Duration(time.Second), Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second),
		Triggers: triggerOptions("outage", "3s")}
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "outage: 3s is not shorter than after, 2s (accepted: shorter than after") {
		t.Errorf("Validate of a 3s outage in a 2s after = %v; want an error naming outage and the accepted values", err)
	}
	p.Trigger, p.Triggers = "slowdb", triggerOptions("slowdb_for", "2s")
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "slowdb_for: 2s is not shorter than after") {
		t.Errorf("Validate of a 2s slowdb in a 2s after = %v; want an error naming slowdb_for", err)
	}
}

// triggerOptions is every trigger with its defaults but for the options
// given, key then value, as a flag would set them.
func triggerOptions(kv ...string) *triggers.Registry {
	reg := triggers.Default()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := reg.Set(kv[i], kv[i+1]); err != nil {
			panic(err)
		}
	}
	return reg
}
