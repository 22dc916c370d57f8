package gates

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// vacuous says how a number gate is decided before the run, from the
// range its path's figures lie in (a ratio 0 to 1, whether written as a
// percentage or not; any other figure but a signed one 0 or more):
// "holds" (it cannot fail: a bound at or beyond the range's end), "fails"
// (it cannot pass), or "" when the run decides it.
func vacuous(g Gate) string {
	if g.Word != "" || Signed(g.Path) {
		return ""
	}
	v, low, top := g.Value, 0.0, math.Inf(1)
	if IsRatio(g.Path) {
		top = 1
	}
	if AtLeastOne(g.Path) {
		low = 1
	}
	switch {
	case g.Op == "<" && v > top, g.Op == "<=" && v >= top, g.Op == ">" && v < low, g.Op == ">=" && v <= low, g.Op == "!=" && (v < low || v > top):
		return "holds"
	case g.Op == "<" && v <= low, g.Op == "<=" && v < low, g.Op == ">" && v >= top, g.Op == ">=" && v > top, g.Op == "==" && (v < low || v > top):
		return "fails"
	}
	return ""
}

// AtLeastOne says whether path's figure is never below 1: the clients'
// attempts per request (retries.amplification), the first attempt
// included.
func AtLeastOne(path string) bool {
	return path == "retries.amplification" || path == "layers.client_amplification"
}

// vacuousWhy says why a gate vacuous decides is decided before the run,
// and what would not be.
func vacuousWhy(g Gate) string {
	num := strconv.FormatFloat(g.Value, 'g', -1, 64)
	switch {
	case IsRatio(g.Path) && g.Percent:
		return fmt.Sprintf("%s %s %s%% %s whatever the run does: a ratio is 0%% to 100%% (accepted: a bound inside it, such as %s < 1%%)",
			g.Path, g.Op, strconv.FormatFloat(g.Value*100, 'g', -1, 64), vacuous(g), g.Path)
	case IsRatio(g.Path):
		return fmt.Sprintf("%s %s %s %s whatever the run does: a ratio is 0 to 1, here as a bare number too (accepted: a bound inside it, such as %s < 0.01 or %s < 1%%)",
			g.Path, g.Op, num, vacuous(g), g.Path, g.Path)
	}
	if AtLeastOne(g.Path) {
		return fmt.Sprintf("%s %s %s %s whatever the run does: %s is attempts per request, the first included, never below 1 (accepted: a bound above 1, such as %s <= 2 or %s > 1.5)",
			g.Path, g.Op, num, vacuous(g), g.Path, g.Path, g.Path)
	}
	return fmt.Sprintf("%s %s %s %s whatever the run does: %s is never negative (accepted: a bound above 0, such as %s <= 100 or %s > 0)",
		g.Path, g.Op, num, vacuous(g), g.Path, g.Path, g.Path)
}

// Signed says whether path's figure may be negative, so that no bound on
// it is decided before the run: an instant relative to T (at_ms, from_ms,
// to_ms, start_ms, started_ms, ended_ms, exited_ms, ended_when_ms), the
// goodput's trend, an exit code. Every other figure is a count, a
// duration, a rate or a ratio: 0 or more. recovery_ms and
// recovery_from_t_ms are durations: the first row of the hold back in
// band is at or after the trigger's end, which is at or after T.
func Signed(path string) bool {
	return slices.Contains([]string{"trend", "exit_code", "at_ms", "from_ms", "to_ms", "start_ms", "started_ms", "ended_ms", "exited_ms", "ended_when_ms"},
		path[strings.LastIndex(path, ".")+1:])
}

// IsRatio says whether path holds a ratio from 0 to 1, which a gate may
// compare with a percentage: the paths ending in _rate, _ratio or share
// (escape.share, the escape load's share of the rate that tipped it), but
// load.achieved_rate, which is requests sent per second.
func IsRatio(path string) bool {
	if strings.HasSuffix(path, "achieved_rate") { // load.achieved_rate: sent per second
		return false
	}
	return strings.HasSuffix(path, "_rate") || strings.HasSuffix(path, "_ratio") || strings.HasSuffix(path, "share")
}
