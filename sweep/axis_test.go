package sweep

import (
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/triggers"
)

func TestParseAxis(t *testing.T) {
	p := plan.Plan{Trigger: "slowdb", Triggers: triggers.Default()}
	for _, tt := range []struct {
		spec, want, err string
	}{
		{"slowdb_for=500ms..10s", "slowdb_for 500..10000 ms", ""},
		{"rate=100..1000", "rate 100..1000 count", ""},
		{"rate=100..1.5k", "rate 100..1500 count", ""}, // as --rate reads it
		{"rate=100..1.5", "", `"1.5" is not a whole number of 1 or more`},
		{"burst=10..100", "", `"burst" is not a magnitude of trigger slowdb (accepted: hot_keys, rate, slowdb_for, slowdb_latency)`},
		{"slowdb_for=10s..500ms", "", "FROM 10s is not below TO 500ms"},
		{"rate=100..100", "", "FROM 100 is not below TO 100"},
		{"rate=0..100", "", "not a whole number of 1 or more"},
		{"rate", "", "not a range (accepted: NAME=FROM..TO"},
	} {
		a, err := ParseAxis(p, tt.spec)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseAxis(%q) = %v; want an error with %q", tt.spec, err, tt.err)
		case tt.err == "" && (err != nil || a.Name+" "+Format(a.From, Count)+".."+Format(a.To, Count)+" "+string(a.Unit) != tt.want):
			t.Errorf("ParseAxis(%q) = %+v, %v; want %s", tt.spec, a, err, tt.want)
		}
	}
	if _, err := ParseGrid(p, "rate="); err == nil || !strings.Contains(err.Error(), "no values") {
		t.Errorf("ParseGrid(rate=) = %v; want no values", err)
	}
	// an empty value is a slip, not a value left out (it was dropped)
	for _, spec := range []string{"rate=,", "rate=100,,300"} {
		if _, err := ParseGrid(p, spec); err == nil || !strings.Contains(err.Error(), "is empty (accepted: NAME=V1,V2,...") {
			t.Errorf("ParseGrid(%s) = %v; want its empty value refused", spec, err)
		}
	}
}

func TestTippingGates(t *testing.T) {
	ax := &Axis{Name: "slowdb_for", From: 500, To: 10_000, Unit: Milliseconds}
	v := func(f float64) *float64 { return &f }
	found := ArmSweep{Name: "none", Tipping: &Tipping{State: TipFound, Value: v(2500)}, Bracket: &Bracket{Survived: v(2300), Tipped: v(2500)}}
	none := ArmSweep{Name: "lock", Tipping: &Tipping{State: TipNone}, Bracket: &Bracket{Survived: v(10_000)}}
	below := ArmSweep{Name: "none", Tipping: &Tipping{State: TipBelow, Value: v(500)}, Bracket: &Bracket{Tipped: v(500)}}
	unknown := ArmSweep{Name: "none", Tipping: &Tipping{State: TipUnknown, Value: v(3000)}, Bracket: &Bracket{Tipped: v(3000)}}
	for _, tt := range []struct {
		gate string
		arm  ArmSweep
		want bool
	}{
		{"tipping >= 2s", found, true},
		{"tipping >= 3s", found, false},
		{"tipping == none", found, false},
		{"tipping != none", found, true},
		{"tipping == none", none, true},
		{"tipping >= 5s", none, true},
		{"tipping <= 20s", none, false},
		{"tipping <= 1s", below, true},
		{"tipping >= 100ms", below, false},
		{"tipping <= 1h", unknown, false},
		{"tipping != none", unknown, false},
	} {
		gs, errs := ParseGates([]string{tt.gate}, ax, []string{"none", "lock"})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := gs[0].Holds(*tt.arm.Tipping, tt.arm.Bracket); got != tt.want {
			t.Errorf("%s on %s = %v; want %v", tt.gate, tt.arm.Tipping.State, got, tt.want)
		}
	}
	for gate, want := range map[string]string{
		"swr:tipping >= 2s":                         `arm "swr" is not swept (accepted: none, lock)`,
		"tipping >= 100":                            `"100" is not a duration of 1ms or more`,
		"tipping < none":                            "none compares with == or != only",
		"db.queries <= 10":                          `"db.queries" is not a sweep's figure (accepted: tipping`,
		"lock:http.p99_ms < 250 for 95% of seconds": "a gate over seconds judges one run's timeline, and a sweep's gates judge each arm's tipping point",
	} {
		if _, errs := ParseGates([]string{gate}, ax, []string{"none", "lock"}); len(errs) != 1 || !strings.Contains(errs.Error(), want) {
			t.Errorf("ParseGates(%q) = %v; want %q", gate, errs, want)
		}
	}
}

// ParseAxis and ParseGates never panic on what a user types, and an axis
// they accept writes back to a spec that reads the same.
func FuzzParseAxis(f *testing.F) {
	for _, s := range []string{"slowdb_for=500ms..10s", "rate=10..1000", "burst=1..2", "x=..", "rate=1..1e9", "slowdb_for=1ns..1h"} {
		f.Add(s, "tipping >= 2s")
	}
	p := plan.Plan{Trigger: "slowdb", Triggers: triggers.Default()}
	f.Fuzz(func(t *testing.T, spec, gate string) {
		a, err := ParseAxis(p, spec)
		if err != nil {
			return
		}
		again, err := ParseAxis(p, a.Name+"="+Format(a.From, a.Unit)+".."+Format(a.To, a.Unit))
		if err != nil || again != a {
			t.Errorf("ParseAxis(%q) = %+v; written back it reads %+v, %v", spec, a, again, err)
		}
		_, _ = ParseGates([]string{gate}, &a, []string{"none"})
		_ = Sweep{Vary: &a, Settings: DefaultSettings}.WorstProbes()
	})
}
