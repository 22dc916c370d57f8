package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
)

// idleKnobs are the knobs set for every arm (set: a flag, or a scenario
// file's knobs:) that belong to a mitigation no arm's strategy uses: they
// would do nothing. An arm that names no strategy keeps the testbed's,
// which may be any: then nothing is said. A knob bad already has a
// problem with is not told twice.
func idleKnobs(plan plan.Plan, reg *replica.Mitigations, set map[string]bool, bad herd.FieldErrors) herd.FieldErrors {
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
func idleWriteKnobs(plan plan.Plan, set map[string]bool, bad herd.FieldErrors) herd.FieldErrors {
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
	for _, k := range slices.Sorted(maps.Keys(replica.WriteKnobs)) {
		w := replica.WriteKnobs[k]
		if !set[k] || used[w] || slices.ContainsFunc(bad, func(e *herd.FieldError) bool { return e.Field == k }) {
			continue
		}
		idle.Add(k, "an option of write strategy %s, and the arms' is %s, so it would do nothing (accepted: with --write-strategy %s or an arm write=%s, or left out)",
			w, strings.Join(strategies, ", "), w, w)
	}
	return idle
}

// idleArmKnobs are the knobs an arm sets of its own (a scenario's
// arms[].knobs: not the ones set for every arm, in base) that belong to
// a mitigation the arm's strategy does not use: strategy lock with an
// xfetch_beta would do nothing, and the arm would read as tuned.
func idleArmKnobs(plan plan.Plan, reg *replica.Mitigations, base herd.Settings) herd.FieldErrors {
	mitigation := map[string]string{}
	for _, k := range reg.Knobs() {
		mitigation[k.Name] = k.Mitigation
	}
	var idle herd.FieldErrors
	for _, a := range plan.Arms {
		var s string
		if a.Select != nil || json.Unmarshal(a.Knobs["strategy"], &s) != nil || s == "" {
			continue
		}
		uses := strings.Split(s, "+")
		for _, k := range slices.Sorted(maps.Keys(a.Knobs)) {
			if m := mitigation[k]; m != "" && base[k] == nil && !slices.Contains(uses, m) {
				such := s + "+" + m
				if s == replica.None {
					such = m
				}
				idle = append(idle, &herd.FieldError{Field: "arms", Elem: a.Name,
					Msg: k + " is a knob of " + m + ", and the arm's strategy is " + s + ", so it would do nothing (accepted: a strategy with " + m + ", such as " + such + "; or the knob left out)"})
			}
		}
	}
	return idle
}
