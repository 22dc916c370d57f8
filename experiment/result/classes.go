package result

import (
	"cmp"

	"github.com/herdbench/herdbench/targets"
)

// A target's traffic may be classes of requests (its file's requests:),
// one of them the herd's: every figure of a class is its own, so what the
// herd on one endpoint does to the others (the blast radius) shows beside
// the herd.

// RequestFigures are one request class's figures in an arm, from the
// clients' records of that class alone (intended from T, as http.*), and
// its verdict: the arm's rule (verdict.go) on the class's own timeline,
// against its own before window, on its p99 and goodput (the database is
// the arm's, not a class's).
type RequestFigures struct {
	Herd       bool    `json:"herd"` // the herd's class: its keys are the ones the trigger hits
	Requests   int64   `json:"requests"`
	OK         int64   `json:"ok"`
	Errors     Errors  `json:"errors"`
	DropRate   float64 `json:"drop_rate"`   // (requests - ok) / requests
	GoodputRPS float64 `json:"goodput_rps"` // ok answers a second, from T
	P50MS      float64 `json:"p50_ms"`
	P90MS      float64 `json:"p90_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	// BaselineP99MS is the before window's p99 of the class: what the
	// herd did to it is p99_ms beside it
	BaselineP99MS float64 `json:"baseline_p99_ms"`
	Verdict       string  `json:"verdict"`
	RecoveryMS    *int64  `json:"recovery_ms"` // from the trigger's end; null: not recovered
	// RelapseFromTMS is when the class, back in band, first fell out again
	// (the arm's relapse_from_t_ms, on its own rows); null: it never did
	RelapseFromTMS *int64 `json:"relapse_from_t_ms,omitempty"`
	// Timeline is the class's rows, as the arm's (t_ms from T)
	Timeline []ClassRow `json:"timeline"`
}

// ClassRow is 100 ms of a class's timeline.
type ClassRow struct {
	TMS      int64   `json:"t_ms"`
	Requests int64   `json:"requests"` // intended in this row
	OK       int64   `json:"ok"`
	Unsent   int64   `json:"unsent"`
	P99MS    float64 `json:"p99_ms"`
}

// ClassInfo is one class of what the target sends, for reports: its name,
// its share of the rate, and its request.
type ClassInfo struct {
	Name    string  `json:"name"`
	Share   float64 `json:"share"` // of the rate
	Herd    bool    `json:"herd"`
	Request string  `json:"request"` // method and path, as its template has them
}

// ClassesOf describes a target's classes; none for a target of one.
func ClassesOf(cs []targets.Class) []ClassInfo {
	total := 0
	for _, c := range cs {
		total += c.Weight
	}
	out := make([]ClassInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, ClassInfo{Name: c.Name, Share: Round4(float64(c.Weight) / float64(max(total, 1))),
			Herd: c.Herd, Request: cmp.Or(c.Request.Method, "GET") + " " + c.Request.Path})
	}
	return out
}

// ClassFigurePaths are the paths a gate may name of a class's figures,
// after requests.NAME.
var ClassFigurePaths = FigurePaths(&RequestFigures{})

// ClassPaths are the gate paths of classes' figures, and their word
// paths (requests.NAME.verdict).
func ClassPaths(names []string) ([]string, map[string][]string) {
	var paths []string
	words := map[string][]string{}
	for _, n := range names {
		for _, p := range ClassFigurePaths {
			paths = append(paths, "requests."+n+"."+p)
		}
		words["requests."+n+".verdict"] = Verdicts
	}
	return paths, words
}

// classRuns are runs seen as request class name's alone (its verdict), for
// the verdict of a repeated arm's class.
func classRuns(runs []ArmResult, name string) []ArmResult {
	out := make([]ArmResult, 0, len(runs))
	for _, r := range runs {
		if f := r.Requests[name]; f != nil {
			out = append(out, ArmResult{Verdict: f.Verdict})
		}
	}
	return out
}
