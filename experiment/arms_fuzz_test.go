package experiment_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// FuzzArms: any --arms list of the testbed either fails to parse or validate with a
// message naming its arm, or yields arms that each run a valid config and,
// for retry arms, a policy.
func FuzzArms(f *testing.F) {
	for _, s := range []string{"none,singleflight,lock,xfetch", "lock+ttl_jitter", "retry=full-jitter:100ms:2s:3,retry=none",
		"retry=exp:1s", "none,none", "+", "retry=", "xfetch+lock", ",,", "throttle=2,throttle=x", "throttle=-1", "ratelimit+lock",
		"hedge=50ms,hedge=0s,hedge=none", "client-breaker=5:2s,client-breaker=x", "shed+shed_priority", "lock+shed_priority"} {
		f.Add(s, "expire", "postgres")
	}
	f.Fuzz(func(t *testing.T, arms, trigger, dependency string) {
		parsed, errs := subject.ArmKinds.Parse(arm.NameSpecs(strings.Split(arms, ",")), replica.FullPatch(replica.DefaultConfig), nil)
		for _, e := range errs {
			if e.Msg == "" || e.Field != "arms" {
				t.Fatalf("ArmKinds.Parse(%q): %#v; want a message about an arm", arms, e)
			}
		}
		if len(errs) > 0 {
			return
		}
		p := plan.Plan{Arms: parsed, Trigger: trigger, HotKeys: 1, Keys: 10, Zipf: 1.1,
			Rate: 10, Clients: 1, Timeout: herd.Duration(time.Second), Before: herd.Duration(time.Second), After: herd.Duration(time.Second),
			Triggers: TriggerOptions("dependency", dependency)}
		err := append(herd.Fields(p.Validate()), p.CheckArms(subject.Checker{})...).Err()
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error message")
			}
			return
		}
		for _, a := range p.Arms {
			cfg, cerr := replica.DefaultConfig.Patched(a.Knobs)
			if cerr == nil {
				cerr = cfg.Validate()
			}
			if cerr != nil {
				t.Fatalf("arm %q passed validation with an invalid config: %v", a.Name, cerr)
			}
			if strings.HasPrefix(a.Name, "retry=") && a.Retry == nil {
				t.Fatalf("retry arm %q passed validation without a policy", a.Name)
			}
			if strings.HasPrefix(a.Name, "throttle=") && (a.Throttle == nil || *a.Throttle < 0) {
				t.Fatalf("throttle arm %q passed validation without a K of 0 or more", a.Name)
			}
			if strings.HasPrefix(a.Name, "hedge=") && (a.Hedge == nil || a.Hedge.Delay <= 0) {
				t.Fatalf("hedge arm %q passed validation without a delay", a.Name)
			}
			if strings.HasPrefix(a.Name, "client-breaker=") && (a.Breaker == nil || a.Breaker.Failures == 0) {
				t.Fatalf("client breaker arm %q passed validation without a breaker", a.Name)
			}
		}
	})
}
