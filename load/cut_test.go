package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// A schedule cut while it runs ends at the cut: every request intended up
// to it is sent and answered (none cancelled, none counted unsent), and
// none is intended after it, although the schedule was ten times longer.
// The server holds each request 50 ms, so requests are in flight at the cut.
func TestCutEndsTheScheduleAndKeepsWhatWasSent(t *testing.T) {
	localtest.Measures(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		time.Sleep(50 * time.Millisecond) // the server's service time, not a wait for readiness
	}))
	defer srv.Close()
	const rate = 200
	var cut Cut
	c := Config{Targets: []string{srv.URL}, Rate: rate, Duration: 10 * time.Second, Keys: 10, Zipf: 1.1, Seed: 1,
		Timeout: 5 * time.Second, Clients: 10, Cut: &cut, Start: time.Now().Add(20 * time.Millisecond)}
	var got collect
	var n atomic.Int64
	start, err := Attack(context.Background(), c, func(r Record) {
		got.add(r)
		if n.Add(1) == 100 { // about half a second in: cut now
			cut.At(time.Now())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	at, ok := cut.When()
	if !ok {
		t.Fatal("the schedule was never cut")
	}
	interval := time.Second / rate
	want := int(at.Sub(start) / interval) // hits k with (k+1) intervals <= the cut
	if len(got.recs) != want && len(got.recs) != want+1 {
		t.Errorf("%d records; want %d, one per request intended up to the cut at %s", len(got.recs), want, at.Sub(start))
	}
	for _, r := range got.recs {
		if r.Intended.After(at) {
			t.Errorf("record %d intended %s after the cut", r.Seq, r.Intended.Sub(at))
		}
		if r.Outcome != OK {
			t.Errorf("record %d: %s; want ok: a cut ends the schedule, not the requests in flight", r.Seq, r.Outcome)
		}
	}
}

func TestCutKeepsTheEarliest(t *testing.T) {
	var c Cut
	if _, ok := c.When(); ok {
		t.Fatal("a new Cut is cut")
	}
	t0 := time.Now()
	c.At(t0.Add(time.Second))
	c.At(t0)
	c.At(t0.Add(2 * time.Second))
	if at, _ := c.When(); !at.Equal(t0) {
		t.Errorf("cut at %s; want the earliest, %s", at.Sub(t0), time.Duration(0))
	}
	var none *Cut
	if _, ok := none.When(); ok {
		t.Error("a nil Cut is cut")
	}
}
