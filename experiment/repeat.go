package experiment

import (
	"time"

	"github.com/herdbench/herdbench/experiment/result"
)

// aggregate is every arm of runs (indexed as the plan's arms) that has a
// run, in plan order, each over its runs; repeated: the plan repeats its
// arms, so an arm with one run says so too.
func aggregate(runs [][]result.ArmResult, repeated bool) ([]result.ArmResult, error) {
	out := []result.ArmResult{}
	for _, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		of := result.Aggregate
		if repeated {
			of = result.OverRuns
		}
		a, err := of(rs)
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// inRound is env with progress that says which round of rounds it is,
// and ends later by the rounds after it: each arms more arms at what an
// arm has taken so far.
func (e Env) inRound(round, rounds, arms int, clk *clock, load time.Duration) Env {
	if rounds <= 1 || e.Progress == nil {
		return e
	}
	report := e.Progress
	e.Progress = func(pr Progress) {
		pr.Run, pr.Runs = round+1, rounds
		pr.Ends = pr.Ends.Add(time.Duration((rounds-round-1)*arms) * (clk.fill + load + clk.drain))
		report(pr)
	}
	return e
}
