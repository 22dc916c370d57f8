package reporters

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
)

// maxMS is the longest duration a figure in ms may hold: what a
// time.Duration holds, about 292 years. A longer one renders as a
// negative duration.
const maxMS = float64(math.MaxInt64 / int64(time.Millisecond))

// checkResults refuses results no run writes (docs/reports.md, "Results
// report refuses"), every problem at once, each at its JSON field: an arm
// named twice, an arm without its http object or its verdict, a figure
// the decoding would read as 0 because the file has it null or leaves it
// out, a figure out of its range, a verdict no run gives, more ok than
// requests, and a stored gate on an arm the file does not hold. b is the
// file's text, rep its decoding. A partial run's gates on arms it never
// reached are dropped from rep: the run was cut before them, so they
// neither passed nor failed.
func checkResults(path string, b []byte, rep *experiment.Report) error {
	var raw struct {
		Arms []map[string]any `json:"arms"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Arms) != len(rep.Arms) {
		return nil // what does not decode was told by the decoding
	}
	var bad herd.FieldErrors
	add := func(field, format string, args ...any) {
		bad = append(bad, &herd.FieldError{File: path, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	paths, words := rep.GatePaths()
	known := map[string]bool{}
	for _, p := range paths {
		known[p] = true
	}
	first := map[string]int{}
	for i, a := range rep.Arms {
		at := fmt.Sprintf("arms[%d]", i)
		if j, twice := first[a.Name]; twice {
			add(at+".name", "%q is arms[%d]'s name too (accepted: each arm named once, as a run names them)", a.Name, j)
		} else {
			first[a.Name] = i
		}
		if h, ok := raw.Arms[i]["http"].(map[string]any); !ok || h == nil {
			add(at+".http", "%s (accepted: an object with the arm's requests, ok, drop_rate and latencies, which a run writes for every arm)", absence(raw.Arms[i], "http"))
		} else {
			bad = append(bad, absentFigures(path, at, raw.Arms[i], a.Figures())...)
		}
		bad = append(bad, badWords(path, at, a, words)...)
		bad = append(bad, badFigures(path, at, a.Figures(), known)...)
	}
	if len(bad) == 0 { // a gate on a bad figure follows from it: not told again
		bad = storedGates(path, rep)
	}
	return bad.Err()
}

// absence says how key is not a figure of object m: missing or null.
func absence(m map[string]any, key string) string {
	if _, ok := m[key]; ok {
		return "null"
	}
	return "missing"
}

// absentFigures are the figures of an arm (at: arms[i]) that its decoding
// holds as numbers and its text, arm, has null or leaves out: the
// decoding read them as 0. A figure a run writes as null (db, when the
// target declares no Postgres; recovery_ms, when the arm never recovered)
// decodes as no value, and is not one of them. Each object that leaves
// figures out is told once, naming them.
func absentFigures(path, at string, arm map[string]any, figs map[string]*float64) herd.FieldErrors {
	var bad herd.FieldErrors
	missing := map[string][]string{} // the object's path: the figures it leaves out
	for _, p := range slices.Sorted(maps.Keys(figs)) {
		if figs[p] == nil {
			continue
		}
		v, found, parent := lookup(arm, p)
		switch {
		case found && v == nil:
			bad = append(bad, &herd.FieldError{File: path, Field: at + "." + p, Msg: fmt.Sprintf(
				"null, and a run writes %s as a number wherever it writes %s (accepted: %s; a figure a run did not observe is its object's null, %s)",
				p, cmp.Or(parent, "an arm"), accepted(p), gates.ContractDoc)})
		case !found:
			missing[parent] = append(missing[parent], strings.TrimPrefix(p, parent+"."))
		}
	}
	for _, obj := range slices.Sorted(maps.Keys(missing)) {
		field := at
		if obj != "" {
			field += "." + obj
		}
		bad = append(bad, &herd.FieldError{File: path, Field: field, Msg: fmt.Sprintf(
			"no %s, which a run writes (accepted: each a number; results as a run writes them, %s)", strings.Join(missing[obj], ", "), gates.ContractDoc)})
	}
	return bad
}

// lookup finds the figure at path p in arm's JSON: its value, whether it
// is there, and the path of the deepest object on the way that is (its
// own object's when found; "" for the arm's top). A key may hold dots (a request class's name), so
// each key of an object is tried as the path's next part.
func lookup(arm map[string]any, p string) (any, bool, string) {
	var obj any = arm
	done := ""
	for rest := p; ; {
		m, ok := obj.(map[string]any)
		if !ok {
			return nil, false, done
		}
		next := ""
		for k := range m {
			if (rest == k || strings.HasPrefix(rest, k+".")) && len(k) > len(next) {
				next = k
			}
		}
		if next == "" {
			return nil, false, done
		}
		obj, rest = m[next], strings.TrimPrefix(strings.TrimPrefix(rest, next), ".")
		if rest == "" {
			return obj, true, done
		}
		done = join(done, next)
		if obj == nil {
			return nil, false, done // a null object on the way: its figures are no values
		}
	}
}

// badWords are the arm's words no run gives: a verdict missing or not
// one of its schema's (a v1 file's words are v1's), and a request class's.
func badWords(path, at string, a result.ArmResult, words map[string][]string) herd.FieldErrors {
	var bad herd.FieldErrors
	has, _ := gates.Words(a)
	for _, p := range slices.Sorted(maps.Keys(words)) {
		w, ok := has[p]
		if !ok && p != "verdict" {
			continue // a class this arm does not have
		}
		if slices.Contains(words[p], w) {
			continue
		}
		msg := strconv.Quote(w) + " is not a verdict"
		if w == "" {
			msg = "missing, and a run judges every arm"
		}
		bad = append(bad, &herd.FieldError{File: path, Field: at + "." + p,
			Msg: fmt.Sprintf("%s (accepted: %s)", msg, strings.Join(words[p], ", "))})
	}
	return bad
}

// badFigures are the arm's figures out of the range a run writes them
// in, as gates know it (gates.IsRatio, gates.Signed): a ratio from 0 to
// 1, any other but a signed one 0 or more, a duration in ms one a
// time.Duration holds; and ok above requests in any object with both. A
// figure no gate may name (an arm's config) is its subject's, unchecked.
func badFigures(path, at string, figs map[string]*float64, known map[string]bool) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, p := range slices.Sorted(maps.Keys(figs)) {
		v := figs[p]
		if v == nil || !known[p] {
			continue
		}
		x := *v
		out := x > maxMS && strings.HasSuffix(p, "_ms") || x < -maxMS && gates.Signed(p)
		if !gates.Signed(p) {
			out = out || x < 0 || gates.IsRatio(p) && x > 1
		}
		if out {
			bad = append(bad, &herd.FieldError{File: path, Field: at + "." + p, Msg: fmt.Sprintf(
				"%s out of range (accepted: %s)", strconv.FormatFloat(x, 'g', -1, 64), accepted(p))})
		}
		if obj, ok := strings.CutSuffix(p, "ok"); ok && (obj == "" || strings.HasSuffix(obj, ".")) {
			if req := figs[obj+"requests"]; req != nil && x > *req {
				bad = append(bad, &herd.FieldError{File: path, Field: at + "." + p, Msg: fmt.Sprintf(
					"%s is more than %srequests, %s (accepted: at most the requests: ok counts the requests answered 2xx)",
					strconv.FormatFloat(x, 'g', -1, 64), obj, strconv.FormatFloat(*req, 'g', -1, 64))})
			}
		}
	}
	return bad
}

// accepted says what range the figure at p lies in.
func accepted(p string) string {
	switch {
	case gates.IsRatio(p):
		return "0 to 1: a ratio"
	case strings.HasSuffix(p, "_ms") && gates.Signed(p):
		return "a number of ms from T, within about 292 years either side: an instant"
	case strings.HasSuffix(p, "_ms"):
		return "0 to " + strconv.FormatFloat(maxMS, 'f', -1, 64) + " ms (about 292 years, what a duration holds): a duration"
	case gates.Signed(p):
		return "a number"
	}
	return "a number 0 or more: a count, a rate or a size"
}

// storedGates are the stored gates' results that the file's own arms
// do not give: each is checked again on its arm, as the run checked it
// (result.CheckGates), and a result whose pass or measured value differs
// (of a gate over seconds, or any of its seconds) is refused, so a gate
// passed on a figure the arm does not hold, or with a value it does not
// have, is not reported as passed. A result
// on an arm the file does not hold is refused too, but in a partial
// run's: that run was cut before the arm, so its gates neither passed nor
// failed, and are dropped from rep.
func storedGates(path string, rep *experiment.Report) herd.FieldErrors {
	var bad herd.FieldErrors
	kept := rep.Gates[:0:0]
	for i, r := range rep.Gates {
		at := slices.IndexFunc(rep.Arms, func(a result.ArmResult) bool { return a.Name == r.Arm })
		switch {
		case at >= 0:
			kept = append(kept, r)
			g := gates.Gate{Expr: r.Gate, Arm: r.Arm, Path: r.Path, Op: r.Op, Value: r.Value, Word: r.Word}
			if r.Seconds != nil {
				g.Share = r.Seconds.Share
			}
			again := result.CheckGates([]gates.Gate{g}, rep.Arms[at:at+1])[0]
			switch {
			case again.Pass != r.Pass || measured(again) != measured(r):
				bad = append(bad, &herd.FieldError{File: path, Field: fmt.Sprintf("gates[%d]", i), Msg: fmt.Sprintf(
					"%q on %s says %s, measured %s, and arms[%d] gives %s, measured %s (accepted: the gates as the run checked them on its arms; report --gate checks others)",
					r.Gate, r.Arm, passWord(r.Pass), measured(r), at, passWord(again.Pass), measured(again))})
			case !again.Seconds.Equal(r.Seconds):
				bad = append(bad, &herd.FieldError{File: path, Field: fmt.Sprintf("gates[%d].seconds", i), Msg: fmt.Sprintf(
					"%q on %s: %s (accepted: the seconds as the run judged them from arms[%d]'s timeline)", r.Gate, r.Arm, otherSecond(r.Seconds, again.Seconds), at)})
			}
		case !rep.Partial:
			bad = append(bad, &herd.FieldError{File: path, Field: fmt.Sprintf("gates[%d].arm", i), Msg: fmt.Sprintf(
				"%q is not an arm of these results (accepted: %s, the arms a whole run checks its gates on)", r.Arm, strings.Join(armNames(rep), ", "))})
		}
	}
	if rep.Gates != nil {
		rep.Gates = kept
	}
	return bad
}

// otherSecond says where stored seconds differ from those the arm's rows
// give.
func otherSecond(stored, rows *gates.Seconds) string {
	if stored == nil || rows == nil || len(stored.Windows) != len(rows.Windows) {
		n := func(s *gates.Seconds) int {
			if s == nil {
				return 0
			}
			return len(s.Windows)
		}
		return fmt.Sprintf("%d seconds stored, and the rows give %d", n(stored), n(rows))
	}
	for i, w := range stored.Windows {
		if o := rows.Windows[i]; !w.Equal(o) {
			return fmt.Sprintf("windows[%d] is %s at %s, held %v, and the rows give %s at %s, held %v",
				i, figure("", w.Value), offset(w.StartMS), w.Held, figure("", o.Value), offset(o.StartMS), o.Held)
		}
	}
	return fmt.Sprintf("held %d, and the rows give %d", stored.Held, rows.Held)
}

// measured is what a gate's result measured, as its report shows it.
func measured(r gates.Result) string {
	switch {
	case r.MeasuredWord != nil:
		return *r.MeasuredWord
	case r.Measured != nil:
		return strconv.FormatFloat(*r.Measured, 'g', -1, 64)
	}
	return "no value"
}

func passWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func armNames(rep *experiment.Report) []string {
	out := make([]string, len(rep.Arms))
	for i, a := range rep.Arms {
		out[i] = a.Name
	}
	return out
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
