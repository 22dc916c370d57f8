package experiment

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// Bins sealed at random instants by three striped workers, sent as JSON and
// merged in any order, make the recorder one recorder of every request
// makes: every count equal, the live window equal, each request class's
// figures equal, each histogram bucket for bucket; and the percentiles they give are within LatencyBound of the
// exact ones, read from every latency.
func TestBinsMergeToOneRecorder(t *testing.T) {
	const seed, workers = 11, 3
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	T := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	before, after := 2*time.Second, 3*time.Second
	one := NewRecorder(T, before, after, true)
	one.liveOn = true
	one.FileClasses(2)
	var binners [workers]*Binner
	for i := range binners {
		binners[i] = NewBinner("run-1", i, workers, T, before, after, true, true)
		binners[i].FileClasses(2)
	}
	var bins []Bin
	seal := func(i int) {
		for _, b := range binners[i].Seal() {
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			var back Bin
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			bins = append(bins, back)
		}
	}
	outcomes := []load.Outcome{load.OK, load.OK, load.OK, load.Timeout, load.Shed, load.Error5xx, load.Unsent}
	var exact []int64 // every latency from T, in µs as recorded
	for k := range uint64(8000) {
		intended := T.Add(-3*time.Second + time.Duration(k+1)*750*time.Microsecond) // warmup, before, after, past the end
		rec := load.Record{Seq: k, Intended: intended, Outcome: outcomes[rng.IntN(len(outcomes))], Critical: k%7 == 0, Class: rng.IntN(2)}
		if rec.Outcome != load.Unsent {
			rec.Left = intended.Add(time.Duration(rng.ExpFloat64() * float64(300*time.Microsecond)))
			rec.Latency = time.Duration(rng.ExpFloat64() * float64(40*time.Millisecond))
			rec.Attempts = 1 + rng.IntN(3)
			rec.Hedges = rng.IntN(2)
			rec.SentAt = []time.Time{rec.Left, rec.Left.Add(rec.Latency / 2)}
			if rng.IntN(4) == 0 {
				rec.Cache = "stale"
			}
			if !intended.Before(T) && intended.Before(T.Add(after)) {
				exact = append(exact, min(max(rec.Latency.Microseconds(), 1), 60_000_000))
			}
		}
		one.Add(rec)
		w := int(k % workers)
		binners[w].Add(rec)
		if rng.IntN(40) == 0 {
			seal(w)
		}
	}
	for i := range binners {
		seal(i)
	}
	rng.Shuffle(len(bins), func(i, j int) { bins[i], bins[j] = bins[j], bins[i] })
	merged := NewRecorder(T, before, after, true)
	merged.liveOn = true
	merged.FileClasses(2)
	for _, b := range bins {
		if err := merged.Merge(b.State); err != nil {
			t.Fatalf("merge bin %d of worker %d: %v", b.Seq, b.Worker, err)
		}
	}
	if len(bins) < 100 {
		t.Errorf("%d bins; want the rows split over many (the test's own data)", len(bins))
	}
	if got, want := merged.http(), one.http(); !reflect.DeepEqual(got, want) {
		t.Errorf("http of the merged bins:\n%+v\nwant one recorder's:\n%+v", got, want)
	}
	if got, want := merged.generator(5*time.Second), one.generator(5*time.Second); got != want {
		t.Errorf("generator of the merged bins: %+v; want %+v", got, want)
	}
	if got, want := merged.retries(), one.retries(); got != want {
		t.Errorf("retries of the merged bins: %+v; want %+v", got, want)
	}
	if got, want := merged.State(), one.State(); !reflect.DeepEqual(got, want) || len(got.Classes) != 2 {
		t.Errorf("state of the merged bins differs from one recorder's (rows %d, want %d; live %d, want %d; classes %d, want 2)",
			len(got.Rows), len(want.Rows), len(got.Live), len(want.Live), len(got.Classes))
	}
	p := plan.Plan{Before: herd.Duration(before), After: herd.Duration(after)}
	zero := int64(0)
	classes := result.ClassesOf([]targets.Class{{Name: "items", Weight: 1, Herd: true}, {Name: "browse", Weight: 1}})
	figures := func(r *Recorder) map[string]*result.RequestFigures {
		rows, hists := timeline(p, T, nil, r)
		return r.requestFigures(classes, &result.ArmResult{Timeline: rows, RowHists: hists, Trigger: result.TriggerResult{EndedMS: &zero}})
	}
	if got, want := figures(merged), figures(one); !reflect.DeepEqual(got, want) || want["browse"] == nil || want["browse"].Requests == 0 {
		t.Errorf("request classes' figures of the merged bins:\n%+v\nwant one recorder's:\n%+v", got["browse"], want["browse"])
	}
	// the recorder's percentiles against the exact ones
	slices.Sort(exact)
	if int64(len(exact)) != merged.after.TotalCount() {
		t.Fatalf("%d latencies from T; the merged histogram holds %d", len(exact), merged.after.TotalCount())
	}
	for _, q := range []float64{50, 99, 100} {
		want := exact[max(int(math.Ceil(q/100*float64(len(exact))))-1, 0)]
		got := merged.after.ValueAtQuantile(q)
		if q == 100 {
			got = merged.after.Max()
		}
		if d := math.Abs(float64(got-want)) / float64(want); d > LatencyBound {
			t.Errorf("p%g: %dµs from the merged bins, %dµs exact: off by %.5f; want within %.5f", q, got, want, d, LatencyBound)
		}
	}
}

// A bin whose histogram does not decode, or was recorded around another T
// (another arm's), is refused whole, naming what is wrong.
func TestABadBinIsRefused(t *testing.T) {
	T := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	b := NewBinner("run-1", 0, 1, T, time.Second, time.Second, false, false)
	b.Add(load.Record{Seq: 0, Intended: T.Add(time.Millisecond), Left: T.Add(time.Millisecond), Latency: time.Millisecond, Outcome: load.OK, Attempts: 1})
	good := b.Seal()[0]
	bad := good
	bad.State.Latency = "HISTFnot-a-histogram"
	r := NewRecorder(T, time.Second, time.Second, false)
	if err := r.Merge(bad.State); err == nil || !strings.Contains(err.Error(), "latency") {
		t.Errorf("merge of an undecodable histogram: %v; want it refused naming the latency", err)
	}
	other := NewRecorder(T.Add(time.Second), time.Second, time.Second, false)
	if err := other.Merge(good.State); err == nil || !strings.Contains(err.Error(), "want T") {
		t.Errorf("merge of another arm's bin: %v; want it refused naming T", err)
	}
	if h := r.http(); h.Requests != 0 {
		t.Errorf("after refused merges: %d requests; want 0", h.Requests)
	}
}
