package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/api"
)

// idleKnobs are the knobs set for every arm (set: a flag, or a scenario
// file's knobs:) that belong to a mitigation no arm's strategy uses: they
// would do nothing. An arm that names no strategy keeps the testbed's,
// which may be any: then nothing is said. A knob bad already has a
// problem with is not told twice.
func idleKnobs(plan experiment.Plan, reg *api.Mitigations, set map[string]bool, bad herd.FieldErrors) herd.FieldErrors {
	used := map[string]bool{}
	var arms []string
	for _, a := range plan.Arms {
		var s string
		if a.Select != nil || json.Unmarshal(a.Knobs["strategy"], &s) != nil || s == "" {
			return nil
		}
		for _, part := range strings.Split(s, "+") {
			used[part] = true
		}
		arms = append(arms, a.Name)
	}
	var idle herd.FieldErrors
	for _, k := range reg.Knobs() {
		if !set[k.Name] || k.Mitigation == "" || used[k.Mitigation] || slices.ContainsFunc(bad, func(e *herd.FieldError) bool { return e.Field == k.Name }) {
			continue
		}
		idle.Add(k.Name, "no arm uses %s (arms: %s), so it would do nothing (accepted: an arm whose strategy has %s, or left out)",
			k.Mitigation, strings.Join(arms, ", "), k.Mitigation)
	}
	return idle
}

// idleWriteKnobs are the knobs of a write strategy (apply_rate, queue's)
// set for every arm when no arm's write strategy is theirs (--apply-rate
// 5 --write-strategy direct). An arm that names no write strategy keeps
// the testbed's, which may be any: then nothing is said.
func idleWriteKnobs(plan experiment.Plan, set map[string]bool, bad herd.FieldErrors) herd.FieldErrors {
	used := map[string]bool{}
	var strategies []string
	for _, a := range plan.Arms {
		var s string
		if a.Select != nil || json.Unmarshal(a.Knobs["write_strategy"], &s) != nil || s == "" {
			return nil
		}
		if !used[s] {
			strategies = append(strategies, s)
		}
		used[s] = true
	}
	var idle herd.FieldErrors
	for _, k := range slices.Sorted(maps.Keys(api.WriteKnobs)) {
		w := api.WriteKnobs[k]
		if !set[k] || used[w] || slices.ContainsFunc(bad, func(e *herd.FieldError) bool { return e.Field == k }) {
			continue
		}
		idle.Add(k, "an option of write strategy %s, and the arms' is %s, so it would do nothing (accepted: with --write-strategy %s or an arm write=%s, or left out)",
			w, strings.Join(strategies, ", "), w, w)
	}
	return idle
}
