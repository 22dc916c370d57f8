package admin

import "testing"

func TestCountersGrown(t *testing.T) {
	prev := Counters{Loads: 10, Coalesced: 5, LoadsInFlight: 3, Busy: 6}
	cur := Counters{Loads: 14, Coalesced: 2, LoadsInFlight: 1, Busy: 2}
	got := cur.Grown(prev)
	// loads grew by 4; coalesced went down, so its replica restarted and
	// counted 2 since; the gauges are now's
	if want := (Counters{Loads: 4, Coalesced: 2, LoadsInFlight: 1, Busy: 2}); got != want {
		t.Errorf("%+v.Grown(%+v) = %+v; want %+v", cur, prev, got, want)
	}
	if got, want := prev.Plus(cur), (Counters{Loads: 24, Coalesced: 7, LoadsInFlight: 4, Busy: 8}); got != want {
		t.Errorf("Plus = %+v; want %+v", got, want)
	}
}
