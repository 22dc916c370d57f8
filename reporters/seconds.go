package reporters

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/gates"
)

// A gate over seconds shows as any gate, measuring the seconds that held
// of those after the settle ("29 of 30 s (96.67%)") and expecting its
// bound in at least its share of them; JUnit's failure lists the seconds
// that did not hold.

// maxUnheld is how many seconds that did not hold a JUnit failure lists.
const maxUnheld = 10

// secondsMeasured is what a gate over seconds measured: the seconds
// that held of those it judged, and their share.
func secondsMeasured(s *gates.Seconds) string {
	if s.Count == 0 {
		return "no whole second after the settle"
	}
	return fmt.Sprintf("%d of %d s (%s)", s.Held, s.Count, percent(float64(s.Held)/float64(s.Count)))
}

// secondsExpected is what a gate over seconds had to hold, and in how
// many of its seconds: "< 250 in at least 95% of seconds".
func secondsExpected(bound string, s *gates.Seconds) string {
	return bound + " in at least " + percent(s.Share) + " of seconds"
}

// secondsLong is secondsMeasured, and the seconds that did not hold
// (their start from T and their value), the first maxUnheld of them.
func secondsLong(path string, s *gates.Seconds) string {
	var unheld []string
	for _, w := range s.Windows {
		if w.Held {
			continue
		}
		at := offset(w.StartMS)
		if w.Run > 0 {
			at = fmt.Sprintf("run %d %s", w.Run, at)
		}
		unheld = append(unheld, at+" ("+figure(path, w.Value)+")")
	}
	out := secondsMeasured(s)
	switch n := len(unheld); {
	case n > maxUnheld:
		out += fmt.Sprintf("; not held in the seconds from %s and %d more", strings.Join(unheld[:maxUnheld], ", "), n-maxUnheld)
	case n > 0:
		out += "; not held in the seconds from " + strings.Join(unheld, ", ")
	}
	return out
}

// percent is a share as a percentage, without trailing zeros: 95%,
// 96.67%.
func percent(share float64) string {
	return strconv.FormatFloat(math.Round(share*10000)/100, 'f', -1, 64) + "%"
}
