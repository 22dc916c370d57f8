package retry

import (
	"strings"
	"testing"
	"time"
)

func TestParseHedgeAndBreaker(t *testing.T) {
	hedges := []struct {
		in      string
		want    Hedge
		wantErr string
	}{
		{in: "none", want: Hedge{}},
		{in: "50ms", want: Hedge{Delay: 50 * time.Millisecond, MaxErrorRate: DefaultHedgeMaxErrorRate}},
		{in: "20ms:5%", want: Hedge{Delay: 20 * time.Millisecond, MaxErrorRate: 0.05}},
		{in: "0s", wantErr: `delay "0s" is not a duration above 0`},
		{in: "fast", wantErr: `delay "fast"`},
		{in: "50ms:5", wantErr: `error rate "5" is not a percentage`},
		{in: "50ms:0%", wantErr: `error rate "0%"`},
	}
	for _, tt := range hedges {
		got, err := ParseHedge(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "accepted:") {
				t.Errorf("ParseHedge(%q) error = %v; want it to contain %q and the accepted forms", tt.in, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("ParseHedge(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	breakers := []struct {
		in      string
		want    Breaker
		wantErr string
	}{
		{in: "none", want: Breaker{}},
		{in: "5:2s", want: Breaker{Failures: 5, Open: 2 * time.Second}},
		{in: "5", wantErr: `breaker "5": want two parts`},
		{in: "0:2s", wantErr: `FAILURES "0"`},
		{in: "5:0s", wantErr: `OPEN "0s"`},
	}
	for _, tt := range breakers {
		got, err := ParseBreaker(tt.in)
		switch {
		case tt.wantErr != "":
			// the clients' breaker and the edge's: the caller says whose
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "accepted:") ||
				strings.Contains(err.Error(), "client") {
				t.Errorf("ParseBreaker(%q) error = %v; want it to contain %q and the accepted forms, and not to say whose breaker", tt.in, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("ParseBreaker(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestHedgerStopsAboveTheErrorRate(t *testing.T) {
	g := NewHedger(Hedge{Delay: time.Millisecond, MaxErrorRate: 0.1})
	now := time.Unix(1000, 0)
	if !g.Allow(now) {
		t.Fatal("Allow with no attempts yet = false; want true")
	}
	for i := range 100 {
		g.Done(now, i < 9) // 9% failed
	}
	if !g.Allow(now) {
		t.Error("Allow at 9% errors with a 10% gate = false; want true")
	}
	g.Done(now, true)
	g.Done(now, true) // 11 of 102
	if g.Allow(now) {
		t.Error("Allow at 10.8% errors with a 10% gate = true; want false")
	}
	if !g.Allow(now.Add(HedgeWindow + time.Second)) {
		t.Error("Allow after the window passed = false; want true: old errors no longer count")
	}
}

func FuzzParseHedgeAndBreaker(f *testing.F) {
	for _, s := range []string{"none", "50ms", "50ms:10%", "5:2s", ":", "1h:%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if h, err := ParseHedge(s); err == nil {
			if back, err := ParseHedge(h.String()); err != nil || back != h {
				t.Fatalf("ParseHedge(%q) = %+v; its String %q parses to %+v, %v", s, h, h.String(), back, err)
			}
			if h.Delay < 0 || h.Delay > time.Minute || (h.Delay > 0 && (h.MaxErrorRate <= 0 || h.MaxErrorRate > 1)) {
				t.Fatalf("ParseHedge(%q) = %+v; out of range", s, h)
			}
		}
		if b, err := ParseBreaker(s); err == nil {
			if back, err := ParseBreaker(b.String()); err != nil || back != b {
				t.Fatalf("ParseBreaker(%q) = %+v; its String %q parses to %+v, %v", s, b, b.String(), back, err)
			}
		}
	})
}
