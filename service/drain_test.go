package service

import (
	"context"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/targets"
)

// A drain's limit is the target file's limits.max_drain, or else the
// longer of DrainLimit and the clients' whole deadline, on the arm whose
// deadline is longest: a drain never gives up on work a client could
// still wait for.
func TestDrainLimitCoversTheClientsDeadline(t *testing.T) {
	slow := retry.Policy{Kind: retry.Fixed, Retries: 2, Base: time.Second}
	p := plan.Plan{Timeout: herd.Duration(time.Second), Arms: []arm.Arm{{Name: "baseline"}, {Name: "retrying", Retry: &slow}}}
	for _, c := range []struct {
		name     string
		maxDrain string
		timeout  time.Duration
		want     time.Duration
	}{
		{"short deadlines: DrainLimit", "", time.Second, DrainLimit},
		{"an arm's deadline past it: 3 x 10s + 2 x 1s", "", 10 * time.Second, 32 * time.Second},
		{"the file's, as given", "40s", 10 * time.Second, 40 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := p
			p.Timeout = herd.Duration(c.timeout)
			tg := &targets.Target{Limits: targets.Limits{MaxDrain: c.maxDrain}}
			if got := LimitFor(tg, p); got != c.want {
				t.Errorf("LimitFor(max_drain %q, --timeout %s) = %s; want %s", c.maxDrain, c.timeout, got, c.want)
			}
		})
	}
}

// The subject a service kind opens drains with LimitFor's limit for the
// plan it opens for.
func TestAnOpenedServiceDrainsWithItsPlansLimit(t *testing.T) {
	svc, err := targets.FromURL("http://127.0.0.1:8080/items/{key}")
	if err != nil {
		t.Fatal(err)
	}
	slow := retry.Policy{Kind: retry.Fixed, Retries: 2, Base: time.Second}
	p := plan.Plan{Timeout: herd.Duration(10 * time.Second), Arms: []arm.Arm{{Name: "retrying", Retry: &slow}}}
	o, err := Kind{Svc: svc}.Open(context.Background(), p, plan.Given{Confirm: func(*targets.Target) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if sub, ok := o.Subject.(*Subject); !ok || sub.Limit != 32*time.Second {
		t.Errorf("Open(--timeout 10s, --retry %s).Subject = %#v; want a service's, with a 32s drain limit", slow, o.Subject)
	}
}
