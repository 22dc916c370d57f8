// Package sweep finds, for each arm of an experiment, the smallest trigger
// magnitude after which the service does not recover: its tipping point.
//
// An Axis is one magnitude of a plan (a duration or count option of its
// trigger, the rate, or the hot keys) over a range, NAME=FROM..TO. Bisect
// probes the range on a log scale, per arm: the low end must survive and
// the high end tip, then the geometric mean of the bracket is probed until
// its ends are within the resolution of each other (or adjacent, every
// magnitude being a whole number of its unit). A Grid probes every cell of
// one or two lists of values instead: the map of the verdicts.
//
// A probe is Repeat runs of one arm at one magnitude, each a whole
// experiment (the Runner, given by the caller, so this package runs no
// load itself and is tested against synthetic services). A probe tips when
// at least half of its runs end with a verdict other than recovered (a tie
// tips). Every run's result.ArmResult is kept in the Results, the
// versioned contract (Schema) reports and gates read.
//
//	s := sweep.Sweep{Plan: plan, Vary: &axis, Settings: sweep.DefaultSettings, Run: runOne}
//	res, err := s.Do(ctx)
//	fmt.Println(res.Arms[0].Tipping.Text)
package sweep
