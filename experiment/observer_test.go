package experiment_test

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/testbed/replica"
)

func TestPhaseOf(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	from := T.Add(-time.Second)
	tests := []struct {
		at   time.Duration // from T
		want string
	}{
		{-2 * time.Second, PhaseWarmup},
		{-time.Second - time.Nanosecond, PhaseWarmup},
		{-time.Second, PhaseBefore},
		{-time.Nanosecond, PhaseBefore},
		{0, PhaseAfter},
		{time.Hour, PhaseAfter},
	}
	for _, tt := range tests {
		if got := PhaseOf(T.Add(tt.at), from, T); got != tt.want {
			t.Errorf("PhaseOf(T%+v) = %q; want %q", tt.at, got, tt.want)
		}
	}
}

// observation is what a test observer saw.
type observation struct {
	mu       sync.Mutex
	arms     []string // "name start", "name end" in order
	triggers map[string]time.Time
	records  map[string][]load.Record // arm/phase -> records
	phases   map[string][]string      // arm -> its phases in the order told
	began    map[string]time.Time     // "arm phase" -> when it began, as told
	judged   map[string]result.ArmResult
}

func (o *observation) Phase(arm, phase string, began time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.phases[arm] = append(o.phases[arm], phase)
	o.began[arm+" "+phase] = began
}

func (o *observation) Judged(arm string, res *result.ArmResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.judged[arm] = *res
}

func (o *observation) Arm(name string, running bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ev := name + " end"
	if running {
		ev = name + " start"
	}
	o.arms = append(o.arms, ev)
}

func (o *observation) Request(arm, phase string, r load.Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.records[arm+"/"+phase] = append(o.records[arm+"/"+phase], r)
}

func (o *observation) Trigger(arm string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.triggers[arm] = at
}

// The observer sees what the results count: the requests intended from T to
// the end of the arm, with their outcomes, and T itself.
func TestObserverSeesWhatTheResultsCount(t *testing.T) {
	tg := startTestbed(t, 1)
	p := plan.Plan{
		Arms:    arm.ClientKinds.Arms([]string{replica.None, replica.Singleflight}, replica.FullPatch(replica.DefaultConfig)),
		Trigger: "expire", HotKeys: 5, Keys: 50, Zipf: 1.1, Rate: 100, Clients: 1,
		Timeout: herd.Duration(time.Second), Warmup: herd.Duration(200 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(time.Second), Seed: 3,
	}
	obs := &observation{triggers: map[string]time.Time{}, records: map[string][]load.Record{}, phases: map[string][]string{},
		began: map[string]time.Time{}, judged: map[string]result.ArmResult{}}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg, Observer: Observers{obs}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"none start", "none end", "singleflight start", "singleflight end"}; !slices.Equal(obs.arms, want) {
		t.Errorf("Arm calls = %v; want %v", obs.arms, want)
	}
	for _, a := range rep.Arms {
		if at := obs.triggers[a.Name]; a.Trigger.FiredAt == nil || !at.Equal(*a.Trigger.FiredAt) {
			t.Errorf("%s: Trigger at %v; want the results' fired_at %v", a.Name, at, a.Trigger.FiredAt)
		}
		T := a.T // the planned T, which files requests; the trigger fires just after it
		// each phase told once, in order; the load's at their instants on the schedule
		if want := []string{PhaseFill, PhaseWarmup, PhaseBefore, PhaseAfter, PhaseDrain}; !slices.Equal(obs.phases[a.Name], want) {
			t.Errorf("%s: phases told %v; want %v", a.Name, obs.phases[a.Name], want)
		}
		for phase, at := range map[string]time.Time{PhaseWarmup: T.Add(-time.Duration(p.Before + p.Warmup)), PhaseBefore: T.Add(-time.Duration(p.Before)), PhaseAfter: T} {
			if got := obs.began[a.Name+" "+phase]; !got.Equal(at) {
				t.Errorf("%s: phase %s told as begun at T%+v; want T%+v", a.Name, phase, got.Sub(T), at.Sub(T))
			}
		}
		if j := obs.judged[a.Name]; j.Verdict != a.Verdict || !reflect.DeepEqual(j.Loop, a.Loop) || j.Verdict == "" {
			t.Errorf("%s: judged verdict %q, loop %+v; want the results' %q, %+v", a.Name, j.Verdict, j.Loop, a.Verdict, a.Loop)
		}
		end := T.Add(time.Duration(p.After))
		var requests, ok, attempts int64
		for _, r := range obs.records[a.Name+"/"+PhaseAfter] {
			if r.Intended.Before(T) {
				t.Errorf("%s: a request intended %v before T filed under after", a.Name, T.Sub(r.Intended))
			}
			if r.Intended.Before(end) { // the results end at T+after; the pacer may tick once more
				requests++
				attempts += int64(r.Attempts)
				if r.Outcome == load.OK {
					ok++
				}
			}
		}
		if requests != a.HTTP.Requests || ok != a.HTTP.OK || attempts != a.Retries.Attempts {
			t.Errorf("%s: observer saw %d requests, %d ok, %d attempts after T; results say %d, %d, %d",
				a.Name, requests, ok, attempts, a.HTTP.Requests, a.HTTP.OK, a.Retries.Attempts)
		}
		for _, r := range obs.records[a.Name+"/"+PhaseBefore] {
			if !r.Intended.Before(T) || r.Intended.Before(T.Add(-time.Duration(p.Before))) {
				t.Errorf("%s: a request intended at T%+v filed under before", a.Name, r.Intended.Sub(T))
			}
		}
		if len(obs.records[a.Name+"/"+PhaseWarmup]) == 0 || len(obs.records[a.Name+"/"+PhaseBefore]) == 0 {
			t.Errorf("%s: observer saw %d warmup and %d before requests; want some of each at 100 req/s",
				a.Name, len(obs.records[a.Name+"/"+PhaseWarmup]), len(obs.records[a.Name+"/"+PhaseBefore]))
		}
	}
}
