package triggers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// With ended_when, the trigger ends when the service says so: the probe
// URL's first 2xx after the command's exit, not the exit itself.
func TestCommandEndsWhenItsProbeAnswers(t *testing.T) {
	var up atomic.Bool
	var upAt atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := command("true", "")
	c.EndedWhen = srv.URL + "/healthz"
	if errs := c.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	go func() { // the service comes back 400 ms after T
		time.Sleep(400 * time.Millisecond) // the service's own schedule, not a wait for readiness
		upAt.Store(time.Now().UnixNano())
		up.Store(true)
	}()
	T := time.Now()
	f, err := c.Fire(context.Background(), Env{T: T})
	if err != nil {
		t.Fatal(err)
	}
	d := f.Detail.(*CommandDetail)
	back := time.Unix(0, upAt.Load())
	if f.Ended.Before(back) || d.EndedWhenMS == nil || *d.EndedWhenMS < d.ExitedMS || *d.EndedWhenMS != f.Ended.Sub(T).Milliseconds() {
		t.Errorf("ended at %v from T (probe %v ms, exit %d ms); want at the probe's first 2xx, after the service came back at %v",
			f.Ended.Sub(T), d.EndedWhenMS, d.ExitedMS, back.Sub(T))
	}
}

// A probe that never answers 2xx within its limit leaves the end unknown.
func TestAProbeThatNeverAnswersLeavesTheEndUnknown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer srv.Close()
	if at := probe(context.Background(), srv.URL, 300*time.Millisecond); !at.IsZero() {
		t.Errorf("probe of a 502 ended at %v; want none", at)
	}
	c := command("true", "")
	c.EndedWhen, c.For = "ftp://x", 1
	if errs := c.Validate(); len(errs) != 2 {
		t.Errorf("Validate = %v; want the URL and the second end refused", errs)
	}
}
