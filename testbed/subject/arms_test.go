package subject_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// One --arms list with several bad arms: every one is reported at once,
// each naming its arm and what is accepted, and the good ones read.
func TestParseArmsReportsEveryProblemAtOnce(t *testing.T) {
	names := []string{"none", "retry=exp:1s", "lock", "throttle=two", "hedge=none", "client-breaker=5", "edge-breaker=5",
		"edge-bulkhead=x", "edge-bogus=1", "retry=immediate:2", "edge-retry-budget=10%", "write=queue", "lock+ttl_jitter+write=coalesce", "write=later",
		"retry-budget=10%", "retry-budget=lots"}
	arms, errs := subject.ArmKinds.Parse(arm.NameSpecs(names), noneBase, nil)
	want := []string{
		`arms: "retry=exp:1s": retry policy "exp:1s": exp takes 4 parts separated by ':', got 2 (accepted: none, immediate:N`,
		`arms: throttle=two: K "two" is not a number (accepted: 0, off, or K above 0`,
		`arms: hedge=none: a hedge arm needs a delay, such as hedge=50ms`,
		`arms: client-breaker=5: client breaker "5": want two parts separated by ':' (accepted: none, or FAILURES:OPEN such as 5:2s)`,
		`arms: edge-breaker=5: edge breaker "5": want two parts separated by ':' (accepted: none, or FAILURES:OPEN such as 5:2s)`,
		`arms: edge-bulkhead=x: edge bulkhead "x": not a whole number (accepted: 0, unbounded, to 100000)`,
		`arms: edge-bogus=1: unknown arm kind "edge-bogus" (accepted: a strategy, such as lock or lock+ttl_jitter, or KEY=VALUE, KEY one of retry, retry-budget, throttle, hedge, client-breaker, write, edge-timeout,`,
		`arms: write=later: write strategy "later" (accepted: direct, queue, coalesce)`,
		`arms: retry-budget=lots: retry budget "lots": unknown form (accepted: none, a ratio such as 10%`,
	}
	if len(errs) != len(want) {
		t.Errorf("subject.ArmKinds.Parse(%q) = %d problems; want %d:\n%v", names, len(errs), len(want), errs)
	}
	for i, w := range want {
		if i >= len(errs) || !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("ArmKinds.Parse problem %d = %v; want it to begin %q", i, errs[i], w)
		}
	}
	got := map[string]string{}
	for _, a := range arms {
		got[a.Name] = armString(a)
	}
	for name, w := range map[string]string{
		"none": "strategy none", "lock": "strategy lock", "retry=immediate:2": "strategy none, retry immediate:2",
		"edge-retry-budget=10%": `strategy none, edge {"retry_budget":"10%"}`,
		"retry-budget=10%":      "strategy none, retry budget 10%",
		"write=queue":           "strategy none, write queue", "lock+ttl_jitter+write=coalesce": "strategy lock+ttl_jitter, write coalesce",
	} {
		if got[name] != w {
			t.Errorf("ArmKinds.Parse: arm %s = %q; want %q", name, got[name], w)
		}
	}
}

// A scenario file's arms: a name read as --arms reads it, or a name with a
// strategy, then settings of the same kinds or knobs. Each problem names
// its file, line and field.
func TestParseArmsOfAFile(t *testing.T) {
	lock := replica.Lock
	at := func(line int, field, key, v string) arm.ArmSetting {
		return arm.ArmSetting{Key: key, Value: v, File: "s.yaml", Line: line, Field: field}
	}
	specs := []arm.ArmSpec{
		{Name: "careful", Strategy: &lock, Settings: []arm.ArmSetting{
			at(3, "arms[0].retry", "retry", "exp:10ms:100ms:2"),
			at(4, "arms[0].edge.breaker", "edge-breaker", "5:1s"),
			at(5, "arms[0].knobs.ttl", "ttl", "2s"),
		}},
		{Name: "hedge=50ms", Settings: []arm.ArmSetting{at(7, "arms[1].client_breaker", "client-breaker", "3:1s")}},
		{Name: "broken", Strategy: &lock, Settings: []arm.ArmSetting{
			at(9, "arms[2].retry", "retry", "linear:1s"),
			at(10, "arms[2].edge.breaker", "edge-breaker", "5"),
			at(11, "arms[2].throttle", "throttle", "-1"),
			at(12, "arms[2].knobs.ttl", "ttl", "soon"),
		}},
	}
	knob := func(a *arm.Arm, key, v string) error {
		if key != "ttl" || v != "2s" {
			return fmt.Errorf("%q is not a duration (accepted: such as 2s)", v)
		}
		a.Knobs = a.Knobs.With("ttl", herd.Duration(2e9))
		return nil
	}
	arms, errs := subject.ArmKinds.Parse(specs, noneBase, knob)
	want := []string{
		`s.yaml:9: arms[2].retry: retry policy "linear:1s": unknown kind "linear" (accepted: none, immediate:N`,
		`s.yaml:10: arms[2].edge.breaker: edge breaker "5": want two parts`,
		`s.yaml:11: arms[2].throttle: -1 out of range (accepted: 0, off`,
		`s.yaml:12: arms[2].knobs.ttl: "soon" is not a duration`,
	}
	if len(errs) != len(want) {
		t.Errorf("ArmKinds.Parse of a file = %d problems; want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if i >= len(errs) || !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("ArmKinds.Parse of a file, problem %d = %v; want it to begin %q", i, errs[i], w)
		}
	}
	if got, w := armString(arms[0]), `strategy lock, retry exp:10ms:100ms:2, edge {"breaker":"5:1s"}, ttl 2s`; got != w {
		t.Errorf("arm careful = %q; want %q", got, w)
	}
	if got, w := armString(arms[1]), "strategy none, hedge 50ms:10%, client breaker 3:1s"; got != w {
		t.Errorf("arm hedge=50ms = %q; want %q", got, w)
	}
	// without a knob setter, a knob is not an arm's to set
	_, errs = subject.ArmKinds.Parse(specs[:1], noneBase, nil)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), `s.yaml:5: arms[0].knobs.ttl: unknown key "ttl" (accepted: retry, retry-budget, throttle, hedge, client-breaker, write, edge-timeout,`) {
		t.Errorf("ArmKinds.Parse of a knob without a setter = %v; want one problem at s.yaml:5 listing the arm keys", errs)
	}
}

// Every kind reads its own example: help and errors show what works.
func TestEveryArmKindReadsItsExample(t *testing.T) {
	for _, k := range subject.ArmKinds {
		ex := k.Example
		if ex == "" {
			continue
		}
		if _, errs := subject.ArmKinds.Parse(arm.NameSpecs([]string{k.Key + "=" + ex}), noneBase, nil); len(errs) > 0 {
			t.Errorf("arm %s=%s: %v; want it to read", k.Key, ex, errs)
		}
	}
	if ex := subject.ArmKinds.Examples(); len(ex) != 7 || ex[0] != "retry=full-jitter:100ms:2s:3" || ex[6] != "edge-breaker=5:2s" {
		t.Errorf("the testbed's arm examples = %q; want the seven kinds with examples, retry first, edge-breaker last", ex)
	}
}

// noneBase is the base of the arms here: strategy none.
var noneBase = replica.PatchOf(replica.DefaultConfig, "strategy")

// armString is what an arm sets, for comparing.
func armString(a arm.Arm) string {
	parts := []string{"strategy " + a.Knobs.Text("strategy")}
	if a.Knobs.Sets("write_strategy") {
		c, _ := replica.DefaultConfig.Patched(a.Knobs)
		parts = append(parts, "write "+c.WriteStrategy)
	}
	if a.Retry != nil {
		parts = append(parts, "retry "+a.Retry.String())
	}
	if a.Budget != nil {
		parts = append(parts, "retry budget "+a.Budget.String())
	}
	if a.Throttle != nil {
		parts = append(parts, fmt.Sprintf("throttle %g", *a.Throttle))
	}
	if a.Hedge != nil {
		parts = append(parts, "hedge "+a.Hedge.String())
	}
	if a.Breaker != nil {
		parts = append(parts, "client breaker "+a.Breaker.String())
	}
	if a.Edge != nil {
		b, _ := json.Marshal(a.Edge)
		parts = append(parts, "edge "+string(b))
	}
	if a.Knobs.Sets("ttl") {
		c, _ := replica.DefaultConfig.Patched(a.Knobs)
		parts = append(parts, "ttl "+c.TTL.String())
	}
	return strings.Join(parts, ", ")
}
