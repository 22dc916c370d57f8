package main

import (
	"strings"
	"testing"
)

// --rate reads requests per second as a number, with k for thousands and
// an optional /s; anything else is refused naming the accepted forms.
func TestRateReadsItsForms(t *testing.T) {
	for in, want := range map[string]int{"1000": 1000, "1k": 1000, "1.5k": 1500, "2k/s": 2000, " 300 ": 300, "20K": 20000, "0": 0,
		"16.1k": 16100, "2.01k": 2010, "0.5k": 500, "-5": -5} {
		var n int
		if err := (rateValue{&n}).Set(in); err != nil || n != want {
			t.Errorf("--rate %q = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"1.5", "fast", "NaN", "Inf", "1e12", "k", "1kk", "", "1.0001k", "1.k", ".5k", "+5", "99999999999", "1_000"} {
		n := 7
		err := (rateValue{&n}).Set(in)
		if err == nil || !strings.Contains(err.Error(), "accepted: whole requests per second, such as 500, 1k, 1.5k or 2k/s") || n != 7 {
			t.Errorf("--rate %q = %d, %v; want refused, naming the forms, the rate unchanged", in, n, err)
		}
	}
}
