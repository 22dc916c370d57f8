package experiment

import (
	"fmt"

	"github.com/herdbench/herdbench/gates"
)

// Passed says whether the run passes: every gate held and no arm aborted.
func (r *Report) Passed() bool { return len(r.Failures()) == 0 }

// Failures says why the run does not pass, one line per reason.
func (r *Report) Failures() []string {
	var out []string
	if failed := gates.Failed(r.Gates); failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d gates failed", failed, len(r.Gates)))
	}
	for _, a := range r.Arms {
		if len(a.Runs) == 0 && a.Aborted != nil {
			out = append(out, fmt.Sprintf("arm %s was stopped at %+dms: %s", a.Name, a.Aborted.AtMS, a.Aborted.Gate))
		}
		for i, run := range a.Runs { // a repeated arm: every run stopped counts
			if run.Aborted != nil {
				out = append(out, fmt.Sprintf("arm %s, run %d of %d, was stopped at %+dms: %s", a.Name, i+1, len(a.Runs), run.Aborted.AtMS, run.Aborted.Gate))
			}
		}
	}
	return out
}
