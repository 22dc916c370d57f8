package herd

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Finite reports whether x is a number a user may give: neither NaN nor
// an infinity. strconv.ParseFloat and YAML read both ("NaN", "Inf",
// ".inf"), every comparison with NaN is false, and encoding/json refuses
// to write either; so a range check on a float the user gave starts with
// Finite, and its message names the range, NaN included.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ParseCount reads a whole count as a user writes one: 500, 1k or 1.5k
// (the k multiplies by 1000, shifting the decimal point on the text, so
// 1.5k is 1500 exactly). A fraction left over (1.5, 1.2345k) or a plus
// sign is an error; the range, negatives included, is the caller's.
func ParseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	scale := 0 // decimal places the k shifts
	if u := strings.TrimRight(t, "kK"); len(u) == len(t)-1 {
		t, scale = u, 3
	}
	whole, frac, _ := strings.Cut(t, ".")
	if len(frac) > scale || (frac == "" && strings.HasSuffix(t, ".")) || whole == "" || strings.ContainsAny(whole, "+") {
		return 0, errNotCount
	}
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", scale-len(frac)), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, ErrCountRange
	case err != nil:
		return 0, errNotCount
	}
	return n, nil
}

var errNotCount = errors.New("not a whole count, such as 500, 1k or 1.5k")

// ErrCountRange is a whole count beyond what any count holds.
var ErrCountRange = errors.New("a whole count beyond 9223372036854775807")
