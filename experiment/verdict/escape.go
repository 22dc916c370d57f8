package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
)

// The escape load: once an arm is judged metastable (the live judge of
// auto.go), its offered rate steps down to each of Escape.Shares of the
// arm's rate in turn, each step held until a hold of its rows is back in
// band (the verdict's band, its goodput bound scaled to the step's share)
// or its rows reach Escape.Limit; the first step that comes back is the
// escape load, the highest stepped rate at which the service came back.
// Metastability's defining property is that it is lower than the rate
// that tipped it (hysteresis). The rule is docs/stampede.md's "The escape
// load"; TestEscapeSteps pins it on synthetic rows, escape_live.go runs it.

// Escape is --escape: the shares of the arm's rate the load steps down to
// once the arm is metastable, decreasing, each in (0, 1), and how long
// each step is judged at most (its rows from the step's start).
type Escape struct {
	Shares []float64     `json:"shares"`
	Limit  herd.Duration `json:"step_limit"`
}

// DefaultEscape is --escape on: 75%, 50%, 25% and 10% of the
// arm's rate, each judged for up to 10 s.
var DefaultEscape = Escape{Shares: []float64{0.75, 0.5, 0.25, 0.1}, Limit: herd.Duration(10 * time.Second)}

// EscapeForms are --escape's accepted values, for help and errors.
const EscapeForms = "on (75%,50%,25%,10% of the rate, each step judged for up to 10s), on:LIMIT, SHARES or SHARES:LIMIT such as 60%,30%:15s (shares decreasing, each above 0% and under 100%; LIMIT 2s to 2m), or off"

const (
	minEscapeLimit = 2 * time.Second // a hold, and the rows it takes the old rate's retries to leave
	maxEscapeLimit = 2 * time.Minute
	maxEscapeSteps = 10
)

// ParseEscape reads --escape's text: nil for off.
func ParseEscape(s string) (*Escape, error) {
	bad := func(format string, args ...any) (*Escape, error) {
		return nil, fmt.Errorf("%q: %s (accepted: %s)", s, fmt.Sprintf(format, args...), EscapeForms)
	}
	if s == "off" {
		return nil, nil
	}
	e := Escape{Limit: DefaultEscape.Limit}
	shares := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		d, err := time.ParseDuration(s[i+1:])
		if err != nil {
			return bad("LIMIT %q is not a duration", s[i+1:])
		}
		shares, e.Limit = s[:i], herd.Duration(d)
	}
	if shares == "on" {
		e.Shares = slices.Clone(DefaultEscape.Shares)
	} else {
		for _, f := range strings.Split(shares, ",") {
			v, err := parseShare(strings.TrimSpace(f))
			if err != nil {
				return bad("%v", err)
			}
			e.Shares = append(e.Shares, v)
		}
	}
	if err := e.Check(); err != nil {
		return bad("%v", err)
	}
	return &e, nil
}

// parseShare reads a share as a percentage (75%) or a ratio (0.75), to
// a millionth (0.0001%), so that its text reads back the same.
func parseShare(f string) (float64, error) {
	p, pct := strings.CutSuffix(f, "%")
	v, err := strconv.ParseFloat(p, 64)
	if err != nil || !herd.Finite(v) {
		return 0, fmt.Errorf("share %q is not a number such as 75%% or 0.75", f)
	}
	if pct {
		v /= 100
	}
	return math.Round(v*1e6) / 1e6, nil
}

// Check says what is wrong with e: shares out of (0, 1) or not
// decreasing, too many, a limit out of range.
func (e Escape) Check() error {
	switch {
	case len(e.Shares) == 0 || len(e.Shares) > maxEscapeSteps:
		return fmt.Errorf("%d steps (1 to %d)", len(e.Shares), maxEscapeSteps)
	case time.Duration(e.Limit) < minEscapeLimit || time.Duration(e.Limit) > maxEscapeLimit:
		return fmt.Errorf("LIMIT %s out of range", e.Limit)
	}
	for i, v := range e.Shares {
		switch {
		case math.IsNaN(v) || v <= 0 || v >= 1:
			return fmt.Errorf("share %s is not above 0%% and under 100%% of the rate", pct(v))
		case i > 0 && v >= e.Shares[i-1]:
			return fmt.Errorf("share %s does not step down from %s", pct(v), pct(e.Shares[i-1]))
		}
	}
	return nil
}

// String is e as --escape takes it: 75%,50%,25%,10%:10s.
func (e Escape) String() string {
	return strings.Join(EscapeShares(e), ",") + ":" + e.Limit.String()
}

// EscapeShares are e's shares as percentages: 75%.
func EscapeShares(e Escape) []string {
	parts := make([]string, len(e.Shares))
	for i, v := range e.Shares {
		parts[i] = pct(v)
	}
	return parts
}

// pct is a share as a percentage, to its millionth: 75%, 12.3456%.
func pct(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e4, 'g', -1, 64) + "%" }

// stepBand is b for a step offered share of the before window's rate: the
// same bounds on DB q/s and p99, and on the ok answers of a hold share of
// the baseline's goodput, GoodputBand of it less one.
func (b band) stepBand(share, baselineGoodput float64) band {
	b.okMin = GoodputBand*share*baselineGoodput*RecoveryHold.Seconds() - 1
	return b
}

// readStep reads the step of rows [from, to) (t_ms from T) against its
// band b: the first row from which a hold within the step is in band (ok
// false without one), and the rates of those rows.
func readStep(rows []result.Row, hists []*hdrhistogram.Histogram, b band, from, to int64) (at int64, ok bool, w result.Window) {
	i, _ := slices.BinarySearchFunc(rows, from, func(r result.Row, ms int64) int { return cmp.Compare(r.TMS, ms) })
	j, _ := slices.BinarySearchFunc(rows, to, func(r result.Row, ms int64) int { return cmp.Compare(r.TMS, ms) })
	span := rows[i:j]
	if len(hists) == len(rows) {
		hists = hists[i:j]
	} else {
		hists = nil
	}
	if x := result.WindowOf(span, func(int64) bool { return true }); x != nil {
		w = *x
	}
	at, ok = b.Recovered(span, hists, from)
	return at, ok, w
}

// StepOf is step as read on rows up to to, its judged end.
func StepOf(rows []result.Row, hists []*hdrhistogram.Histogram, b band, baselineGoodput float64, s result.EscapeStep, to int64) result.EscapeStep {
	at, ok, w := readStep(rows, hists, b.stepBand(s.Share, baselineGoodput), s.StartMS, to)
	s.JudgedToMS, s.OfferedRPS, s.GoodputRPS, s.AttemptsRPS = to, w.OfferedRPS, w.GoodputRPS, w.AttemptsRPS
	s.DBQPS = result.Round2(meanQPS(rows, s.StartMS, to))
	if ok {
		d := at - s.StartMS
		s.Read, s.RecoveryMS, s.JudgedToMS = result.StepRecovered, &d, at+RecoveryHold.Milliseconds()
	}
	return s
}

// meanQPS is the mean DB q/s of the rows of [from, to).
func meanQPS(rows []result.Row, from, to int64) float64 {
	var sum float64
	var n int
	for _, r := range rows {
		if r.TMS >= from && r.TMS < to {
			sum, n = sum+r.DBQPS, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// BandOfResult is the band res's holds are judged against, and its before
// window's goodput; ok is false without a before window.
func BandOfResult(res *result.ArmResult) (band, float64, bool) {
	if res.Windows == nil || res.Windows.Before == nil {
		return band{}, 0, false
	}
	var qps float64
	if res.DB != nil {
		qps = res.DB.BaselineQPS
	}
	g := res.Windows.Before.GoodputRPS
	return BandOf(qps, res.BaselineP99, g), g, true
}
