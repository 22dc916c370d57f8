package herd

import "math"

// Finite reports whether x is a number a user may give: neither NaN nor
// an infinity. strconv.ParseFloat and YAML read both ("NaN", "Inf",
// ".inf"), every comparison with NaN is false, and encoding/json refuses
// to write either; so a range check on a float the user gave starts with
// Finite, and its message names the range, NaN included.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
