package gates

import (
	"fmt"
	"slices"
)

// Result is one gate checked on one arm.
type Result struct {
	Gate     string   `json:"gate"` // the expression as written
	Arm      string   `json:"arm"`
	Path     string   `json:"path"`
	Op       string   `json:"op"`
	Value    float64  `json:"value"`
	Measured *float64 `json:"measured"` // null: the figure has no value, which fails
	// Word and MeasuredWord are a word gate's: what it wants and what the
	// arm had (null: no such word, which fails)
	Word         string  `json:"word,omitempty"`
	MeasuredWord *string `json:"measured_word,omitempty"`
	Pass         bool    `json:"pass"`
	// Runs is how many runs the arm's figures are the median of (its
	// word the most common of); 0: one run. A gate over seconds judges
	// every run's seconds together
	Runs int `json:"runs,omitempty"`
	// Seconds are a gate over seconds': each second it judged, and the
	// share that held (Measured)
	Seconds *Seconds `json:"seconds,omitempty"`
}

// Of says what a measured value stands for when an arm ran several times:
// "median of 3 runs" (a word: "most common of 3 runs"); "" for one run.
func (r Result) Of() string {
	switch {
	case r.Runs <= 1:
		return ""
	case r.Seconds != nil:
		return fmt.Sprintf("over %d runs' seconds", r.Runs)
	case r.Word != "":
		return fmt.Sprintf("most common of %d runs", r.Runs)
	}
	return fmt.Sprintf("median of %d runs", r.Runs)
}

// Arm is one arm's name and figures, as Numbers returns them, and its
// words, as Words returns them.
type Arm struct {
	Name    string
	Figures map[string]*float64
	Words   map[string]string
	Runs    int // the figures are the median of this many runs; 0 or 1: one run
	// Seconds are, for each path a gate over seconds names, the arm's
	// whole seconds after its settle, each with its value
	Seconds map[string][]Window
}

// Check evaluates every gate on every arm it names, in order: gates first,
// then arms.
func Check(gs []Gate, arms []Arm) []Result {
	var out []Result
	for _, g := range gs {
		for _, a := range arms {
			if g.Arm != "" && g.Arm != a.Name {
				continue
			}
			r := Result{Gate: g.Expr, Arm: a.Name, Path: g.Path, Op: g.Op, Value: g.Value, Word: g.Word}
			if a.Runs > 1 {
				r.Runs = a.Runs
			}
			if g.Share > 0 {
				r.Seconds, r.Measured = judgeSeconds(g, slices.Clone(a.Seconds[g.Path]))
				r.Pass = r.Seconds.Passed()
			} else if w, ok := a.Words[g.Path]; ok && g.Word != "" {
				r.MeasuredWord, r.Pass = &w, g.HoldsWord(w)
			} else if v := a.Figures[g.Path]; v != nil && g.Word == "" {
				m := *v
				r.Measured, r.Pass = &m, g.Holds(m)
			}
			out = append(out, r)
		}
	}
	return out
}

// Failed counts the results that did not pass.
func Failed(rs []Result) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}
