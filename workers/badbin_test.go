package workers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
)

// A worker endpoint on loopback that answers bad bins fails the arm naming
// the worker: a bin of another run, one sent twice, one whose histogram
// does not decode, one of another arm (another T). Nothing of it is merged.
func TestABadBinFailsTheArmNamingTheWorker(t *testing.T) {
	T := time.Now().Truncate(time.Second)
	b := experiment.NewBinner("run-1", 0, 1, T, time.Second, time.Second, false, false)
	b.Add(load.Record{Seq: 0, Intended: T.Add(time.Millisecond), Left: T.Add(time.Millisecond), Latency: time.Millisecond, Outcome: load.OK, Attempts: 1})
	good := b.Seal()[0]
	undecodable := good
	undecodable.State.Latency = "HISTFbroken"
	otherArm := good
	otherArm.State.T = T.Add(time.Minute)
	otherRun := good
	otherRun.Run = "run-0"
	twice := good
	twice.Seq = 1
	for _, c := range []struct {
		name string
		bins []experiment.Bin
		want string
	}{
		{"another run", []experiment.Bin{otherRun}, "of run run-0; want run-1"},
		{"a duplicate", []experiment.Bin{good, twice}, "sent twice"},
		{"undecodable", []experiment.Bin{undecodable}, "latency"},
		{"another arm", []experiment.Bin{otherArm}, "want T"},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer, _ := json.Marshal(Bins{Bins: c.bins, Done: true})
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == pathBins {
					_, _ = w.Write(answer)
					return
				}
				http.NotFound(w, r)
			}))
			c2 := &Controller{URLs: []string{url}, Client: &http.Client{}}
			p := &prepared{c: c2, run: "run-1", workers: []worker{{index: 0, url: url}}, heard: make([]atomic.Int64, 1)}
			rec := experiment.NewRecorder(T, time.Second, time.Second, false)
			var pastCut atomic.Int64
			_, _, err := p.gather(context.Background(), time.Now(), func(ctx context.Context, i int) (int64, error) {
				f := &binFollower{p: p, i: i, rec: rec, t: T, seen: map[[2]int64]bool{}, filed: make([]atomic.Int64, 1), pastCut: &pastCut}
				return p.followBins(ctx, f)
			})
			if err == nil || !strings.Contains(err.Error(), "worker 0 ("+url+")") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want one naming worker 0 (%s) and %q", err, url, c.want)
			}
			if n := rec.HTTPFigures().Requests; c.name != "a duplicate" && n != 0 {
				t.Errorf("%d requests merged; want none", n)
			}
		})
	}
}
