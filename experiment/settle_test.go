package experiment_test

import (
	"context"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// An arm's settle_ms is the longest timeout on its path, read from what
// runs it: a testbed started with --db-timeout 3s answers it on /healthz,
// and an arm whose replicas retry a failed query once (db_retry
// immediate:1) lets a load take two of them, 6 s, longer than its clients'
// 1 s; the arm without db_retry settles after the clients' whole deadline,
// 1 s and four immediate retries, 5 s.
func TestSettleIsReadFromThePath(t *testing.T) {
	opts := replica.DefaultOptions
	opts.DBTimeout = 3 * time.Second
	tb := localtest.Start(t, local.Config{Replicas: 1, Items: 1000, Replica: opts})
	tg, err := subject.Open(context.Background(), tb.Status(), tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	var once, four retry.Policy
	if err := once.UnmarshalText([]byte("immediate:1")); err != nil {
		t.Fatal(err)
	}
	if err := four.UnmarshalText([]byte("immediate:4")); err != nil {
		t.Fatal(err)
	}
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(10 * time.Millisecond)
	retried := cfg
	retried.DBRetry = replica.DBRetry{Policy: once}
	arms := arm.ClientKinds.Arms([]string{replica.None}, replica.FullPatch(retried))
	arms = append(arms, arm.ClientKinds.Arms([]string{replica.None}, replica.FullPatch(cfg))...)
	arms[1].Name, arms[1].Retry = "clients-retry", &four
	p := plan.Plan{
		Arms: arms, Trigger: "expire", HotKeys: 5, Keys: 50, Zipf: 1.1, Rate: 50, Clients: 2,
		Timeout: herd.Duration(time.Second), Warmup: herd.Duration(200 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(time.Second), Seed: 3,
	}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{6000, 5000} {
		a := rep.Arms[i]
		if a.SettleMS == nil || *a.SettleMS != want {
			t.Errorf("arm %s: settle_ms %v; want %d", a.Name, deref(a.SettleMS), want)
		}
	}
}
