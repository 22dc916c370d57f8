// Package baseline compares a run with a baseline run of the same
// experiment: the change of each figure, arm by arm (arms match by name),
// and limits on how much a figure may regress, such as
// "db.queries=10%" (at most 10% more DB queries than the baseline) or
// "http.p99_ms=50" (at most 50 ms more).
//
// A regression is a rise, except for the figures where more is better
// (cache.hit_ratio, http.ok), where it is a fall. A figure that had a value
// and has none now (recovery_ms of an arm that no longer recovers)
// regressed; one that gained a value improved.
package baseline

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/gates"
)

// Paths are the figures every comparison shows.
var Paths = []string{"db.queries", "db.peak_qps", "http.p99_ms", "http.drop_rate", "retries.amplification", "recovery_ms"}

// higherIsBetter lists the figures whose fall is the regression.
var higherIsBetter = []string{"cache.hit_ratio", "http.ok"}

// Limit bounds how much one figure may regress.
type Limit struct {
	Expr    string  `json:"expr"` // as written: db.queries=10%
	Path    string  `json:"path"`
	Max     float64 `json:"max"`     // a fraction of the baseline when Percent, else in the figure's unit
	Percent bool    `json:"percent"` // Max is relative to the baseline
}

const limitForm = "PATH=MAX, MAX a percentage of the baseline such as db.queries=10% or an amount in the figure's unit such as http.p99_ms=50"

// ParseLimit reads "db.queries=10%" or "http.p99_ms=50".
func ParseLimit(s string) (Limit, error) {
	path, max, ok := strings.Cut(s, "=")
	path, max = strings.TrimSpace(path), strings.TrimSpace(max)
	if !ok || path == "" {
		return Limit{}, fmt.Errorf("max regression %q: want PATH=MAX (accepted: %s)", s, limitForm)
	}
	l := Limit{Expr: s, Path: path}
	num := max
	if p, pct := strings.CutSuffix(max, "%"); pct {
		num, l.Percent = p, true
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v >= 0 && !math.IsInf(v, 1)) { // NaN and Inf too
		return Limit{}, fmt.Errorf("max regression %q: MAX %q is not a number 0 or more (accepted: %s)", s, max, limitForm)
	}
	if l.Percent {
		v /= 100
	}
	l.Max = v
	return l, nil
}

// Validate checks limits against the paths a figure may have (one limit
// a path, one a ratio can exceed), and returns every problem at once.
func Validate(ls []Limit, paths []string) error {
	var errs []error
	seen := map[string]string{}
	for _, l := range ls {
		switch first, twice := seen[l.Path]; {
		case !slices.Contains(paths, l.Path):
			errs = append(errs, fmt.Errorf("max regression %q: unknown path %q (%s)", l.Expr, l.Path, gates.Accepted(l.Path, paths)))
		case twice:
			errs = append(errs, fmt.Errorf("max regression %q: %s has a limit already, %q (accepted: one limit a path)", l.Expr, l.Path, first))
		case gates.IsRatio(l.Path) && !l.Percent && l.Max >= 1:
			// a ratio is 0 to 1: it cannot grow by 1 or more
			errs = append(errs, fmt.Errorf("max regression %q: %s is a ratio, 0 to 1, and cannot grow by %g, so the limit holds whatever the run does (accepted: an amount below 1, such as %s=0.01, or a percentage of the baseline such as %s=10%%)", l.Expr, l.Path, l.Max, l.Path, l.Path))
		}
		seen[l.Path] = l.Expr
	}
	return errors.Join(errs...)
}

// Delta is one figure of one arm in both runs.
type Delta struct {
	Arm     string   `json:"arm"`
	Path    string   `json:"path"`
	Old     *float64 `json:"old"`
	New     *float64 `json:"new"`
	Change  *float64 `json:"change"`  // new - old; null when either is
	Percent *float64 `json:"percent"` // change / old; null when either is, or old is 0
}

// Check is one limit on one arm.
type Check struct {
	Limit   string   `json:"limit"`
	Arm     string   `json:"arm"`
	Path    string   `json:"path"`
	Old     *float64 `json:"old"`
	New     *float64 `json:"new"`
	Allowed *float64 `json:"allowed"` // the worst value the limit allows; null when the baseline has none
	Pass    bool     `json:"pass"`
}

// Comparison is a run against its baseline.
type Comparison struct {
	Baseline string   `json:"baseline"` // where each run came from, as given
	Run      string   `json:"run"`
	Arms     []string `json:"arms"`    // in both runs, in the run's order
	Missing  []string `json:"missing"` // in the baseline only
	Added    []string `json:"added"`   // in the run only
	Deltas   []Delta  `json:"deltas"`
	Checks   []Check  `json:"checks"`
	Partial  bool     `json:"partial"` // the run did not finish every arm
}

// Passed says whether the run holds up against its baseline: every check
// passed, and no arm of the baseline is missing from it (an arm that
// crashed must not pass as one that was not compared).
func (c Comparison) Passed() bool { return len(c.Failures()) == 0 }

// Failures says why the comparison fails, one line per reason.
func (c Comparison) Failures() []string {
	var out []string
	failed := 0
	for _, ch := range c.Checks {
		if !ch.Pass {
			failed++
		}
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d regression checks failed", failed, len(c.Checks)))
	}
	if len(c.Missing) > 0 {
		out = append(out, fmt.Sprintf("arms of the baseline missing from the run: %s", strings.Join(c.Missing, ", ")))
	}
	if c.Partial {
		out = append(out, "the run is partial: not every arm finished")
	}
	return out
}

// Compare compares run with base: the figures of Paths and of every limit,
// for each arm in both.
func Compare(base, run []gates.Arm, limits []Limit) Comparison {
	c := Comparison{Deltas: []Delta{}, Checks: []Check{}, Arms: []string{}, Missing: []string{}, Added: []string{}}
	old := map[string]gates.Arm{}
	for _, a := range base {
		old[a.Name] = a
	}
	paths := slices.Clone(Paths)
	for _, l := range limits {
		if !slices.Contains(paths, l.Path) {
			paths = append(paths, l.Path)
		}
	}
	for _, a := range run {
		b, ok := old[a.Name]
		if !ok {
			c.Added = append(c.Added, a.Name)
			continue
		}
		c.Arms = append(c.Arms, a.Name)
		for _, p := range paths {
			d := Delta{Arm: a.Name, Path: p, Old: b.Figures[p], New: a.Figures[p]}
			if d.Old != nil && d.New != nil {
				ch := *d.New - *d.Old
				d.Change = &ch
				if *d.Old != 0 {
					pct := ch / *d.Old
					d.Percent = &pct
				}
			}
			c.Deltas = append(c.Deltas, d)
		}
		for _, l := range limits {
			c.Checks = append(c.Checks, check(l, a.Name, b.Figures[l.Path], a.Figures[l.Path]))
		}
	}
	for _, a := range base {
		if !slices.ContainsFunc(run, func(r gates.Arm) bool { return r.Name == a.Name }) {
			c.Missing = append(c.Missing, a.Name)
		}
	}
	return c
}

// check applies one limit to one arm's figure in both runs.
func check(l Limit, arm string, old, cur *float64) Check {
	ch := Check{Limit: l.Expr, Arm: arm, Path: l.Path, Old: old, New: cur}
	switch {
	case old == nil:
		ch.Pass = true // nothing to regress from
		return ch
	case cur == nil:
		return ch // it had a value and lost it
	}
	room := l.Max
	if l.Percent {
		room = l.Max * abs(*old)
	}
	allowed := *old + room
	ch.Pass = *cur <= allowed
	if slices.Contains(higherIsBetter, l.Path) {
		allowed = *old - room
		ch.Pass = *cur >= allowed
	}
	ch.Allowed = &allowed
	return ch
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
