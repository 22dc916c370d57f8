package gates

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A gate over seconds ("http.p99_ms < 250 for 95% of seconds") judges
// its figure in each whole second after the arm's settle and passes when
// PATH OP VALUE held in at least SHARE of them: a run can hold its p99
// over the whole window and still break it for ten seconds in a row,
// which a gate over the window misses. Which seconds count, and what a
// figure is over one of them, are the results' to say (experiment/result,
// seconds.go): here each second is judged and the held ones counted.

// secondsForm is what follows VALUE in a gate over seconds.
const secondsForm = "[ARM:]PATH OP VALUE for SHARE of seconds, SHARE a percentage above 0% and at most 100%, such as http.p99_ms < 250 for 95% of seconds"

// forWord is where a gate's tail over seconds begins.
var forWord = regexp.MustCompile(`\s+for(\s|$)`)

// cutSeconds splits expr into the gate on one second and the least share
// of seconds it wants: "http.p99_ms < 250 for 95% of seconds" is
// "http.p99_ms < 250" and 0.95. A gate without "for" is itself, share 0.
func cutSeconds(expr string) (string, float64, error) {
	loc := forWord.FindStringIndex(expr)
	if loc == nil {
		return expr, 0, nil
	}
	head, tail := expr[:loc[0]], strings.Fields(expr[loc[0]:])[1:]
	if len(tail) != 3 || tail[1] != "of" || tail[2] != "seconds" {
		return "", 0, fmt.Errorf("read %q after the gate's VALUE (accepted: %s)", strings.TrimSpace(expr[loc[0]:]), secondsForm)
	}
	num, percent := strings.CutSuffix(tail[0], "%")
	v, err := strconv.ParseFloat(num, 64)
	if !percent || err != nil || !(v > 0 && v <= 100) {
		return "", 0, fmt.Errorf("SHARE %q is not a percentage above 0%% and at most 100%% (accepted: %s)", tail[0], secondsForm)
	}
	return head, v / 100, nil
}

// secondsHint points a VALUE of several words, such as "250 in 95% of
// 1s", at the form of a gate over seconds.
func secondsHint(value string) string {
	if len(strings.Fields(value)) < 2 {
		return ""
	}
	return ", and a gate over seconds ends with for SHARE of seconds"
}

// notOverSeconds says why path, which is not one of seconds, cannot be
// judged over seconds; paths are those a gate on the arm may name.
func notOverSeconds(path string, paths, seconds []string) string {
	switch {
	case len(seconds) == 0:
		return fmt.Sprintf("%s cannot be judged over seconds here (accepted: [ARM:]PATH OP VALUE, without for SHARE of seconds)", path)
	case slices.Contains(paths, path):
		return fmt.Sprintf("%s cannot be judged over seconds: the timeline's rows do not carry it second by second (accepted over seconds: %s)", path, strings.Join(seconds, ", "))
	}
	return fmt.Sprintf("unknown path %q (accepted over seconds: %s)", path, strings.Join(seconds, ", "))
}

// Window is one whole second a gate over seconds judged.
type Window struct {
	Run     int      `json:"run,omitempty"` // of a repeated arm, its run, from 1
	StartMS int64    `json:"start_ms"`      // from T
	Value   *float64 `json:"value"`         // the figure over the second; null: none (nothing sent in it), which does not hold
	Held    bool     `json:"held"`          // PATH OP VALUE held in it
}

// Seconds is a gate over seconds on one arm: the share it wanted, the
// whole seconds after the settle it judged, and how many held.
type Seconds struct {
	Share   float64  `json:"share"` // the least share of the seconds in which the gate must hold
	Held    int      `json:"held"`
	Count   int      `json:"count"` // 0: no whole second after the settle, which fails
	Windows []Window `json:"windows"`
}

// judgeSeconds judges g in each of ws (their values set), in place, and
// counts; measured is the share of them that held, nil without one.
func judgeSeconds(g Gate, ws []Window) (s *Seconds, measured *float64) {
	s = &Seconds{Share: g.Share, Count: len(ws), Windows: ws}
	if s.Windows == nil {
		s.Windows = []Window{}
	}
	for i, w := range s.Windows {
		s.Windows[i].Held = w.Value != nil && g.Holds(*w.Value)
		if s.Windows[i].Held {
			s.Held++
		}
	}
	if s.Count == 0 {
		return s, nil
	}
	share := float64(s.Held) / float64(s.Count)
	return s, &share
}

// Passed says whether the share of seconds that held is at least the
// share wanted.
func (s *Seconds) Passed() bool {
	return s.Count > 0 && float64(s.Held)/float64(s.Count) >= s.Share
}

// Equal says whether s and o judged the same seconds alike: the same
// share wanted and held, and each second the same start, run, value and
// verdict. Nil equals only nil.
func (s *Seconds) Equal(o *Seconds) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Share == o.Share && s.Held == o.Held && s.Count == o.Count && slices.EqualFunc(s.Windows, o.Windows, Window.Equal)
}

// Equal says whether w and o are the same second judged alike.
func (w Window) Equal(o Window) bool {
	same := w.Value == nil && o.Value == nil || w.Value != nil && o.Value != nil && *w.Value == *o.Value
	return same && w.Run == o.Run && w.StartMS == o.StartMS && w.Held == o.Held
}
