package reporters

import (
	"fmt"
	"io"
	"strings"

	"github.com/herdbench/herdbench/experiment/plan"
)

// DryRun writes what a run would do, which it has not done: where the
// load goes and how much, each arm and how it is selected, what the
// trigger touches, and every host the run touches.
func DryRun(w io.Writer, p plan.Preview) error {
	fmt.Fprintf(w, "dry run: nothing was sent\n")
	fmt.Fprintf(w, "target    %s (%s)\n", p.Target, p.Kind)
	for _, h := range p.Hosts {
		fmt.Fprintf(w, "load      %s req/s to %s\n", trimFloat(h.Rate), h.Endpoint)
	}
	if len(p.Classes) > 0 {
		for _, c := range p.Classes {
			fmt.Fprintf(w, "class     %s\n", c)
		}
	} else {
		fmt.Fprintf(w, "request   %s\n", p.Request)
	}
	fmt.Fprintf(w, "keys      %s\n", p.Keys)
	upTo := ""
	if p.AfterAuto {
		upTo = "up to " // the rest once the arm has recovered and held
	}
	fmt.Fprintf(w, "per arm   %s%s of load; before it: %s\n", upTo, p.PerArm, p.Warm)
	fmt.Fprintf(w, "timeline  %s\n", p.Timeline)
	fmt.Fprintf(w, "seed      %s\n", p.Seed)
	fmt.Fprintf(w, "caps      %s\n", p.Caps)
	for _, a := range p.Arms {
		fmt.Fprintf(w, "arm       %s: %s\n", a.Name, a.Selection)
	}
	fmt.Fprintf(w, "trigger   %s\n", p.Trigger)
	if len(p.Abort) > 0 {
		fmt.Fprintf(w, "stop on   %s\n", strings.Join(p.Abort, "; "))
	}
	for _, m := range p.AbortMerged { // given twice, by --abort-on and the file
		fmt.Fprintf(w, "          %s\n", m)
	}
	if len(p.Gates) > 0 {
		fmt.Fprintf(w, "gates     %s\n", strings.Join(p.Gates, "; "))
	}
	if p.Repeat > 1 {
		fmt.Fprintf(w, "repeat    %d runs of every arm, interleaved (every arm, then every arm again): %s of load in all\n", p.Repeat, p.Load)
		fmt.Fprintf(w, "total     %s requests, about, over %d arms × %d runs; at most %s with every retry, hedge and burst\n",
			thousands(p.Requests), len(p.Arms), p.Repeat, thousands(p.Worst))
	} else {
		fmt.Fprintf(w, "total     %s requests, about, over %d arms; at most %s with every retry, hedge and burst\n",
			thousands(p.Requests), len(p.Arms), thousands(p.Worst))
	}
	for _, t := range p.Touches { // one line each: every host and what it is for
		fmt.Fprintf(w, "touches   %s\n", t)
	}
	for _, n := range p.Needed {
		fmt.Fprintf(w, "needs     %s: not set now, needed at run time\n", n)
	}
	return nil
}

func trimFloat(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }
