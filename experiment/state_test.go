package experiment

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
)

// Shares recorded apart (by workers, striped by Seq) and merged through
// their encoded states give exactly what one recorder of every request
// gives: counts, outcomes, the generator's figures, and percentiles.
func TestMergedSharesEqualOneRecorder(t *testing.T) {
	const seed, shares = 7, 3
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	T := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	one := NewRecorder(T, 2*time.Second, 3*time.Second, true)
	var parts [shares]*Recorder
	for i := range parts {
		parts[i] = NewRecorder(T, 2*time.Second, 3*time.Second, true)
	}
	outcomes := []load.Outcome{load.OK, load.OK, load.OK, load.Timeout, load.Shed, load.Error5xx, load.Unsent}
	for k := range uint64(6000) {
		intended := T.Add(-2*time.Second + time.Duration(k+1)*time.Millisecond) // 2 s before T, 4 s after: some past the end
		rec := load.Record{Seq: k, Intended: intended, Outcome: outcomes[rng.IntN(len(outcomes))], Critical: k%7 == 0}
		if rec.Outcome != load.Unsent {
			rec.Left = intended.Add(time.Duration(rng.ExpFloat64() * float64(300*time.Microsecond)))
			rec.Latency = time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
			rec.Attempts = 1 + rng.IntN(3)
			rec.SentAt = []time.Time{rec.Left}
			if rng.IntN(4) == 0 {
				rec.Cache = "stale"
			}
		}
		one.Add(rec)
		parts[k%shares].Add(rec)
	}
	merged := NewRecorder(T, 2*time.Second, 3*time.Second, true)
	for i, p := range parts {
		b, err := json.Marshal(p.State())
		if err != nil {
			t.Fatal(err)
		}
		var st RecorderState
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if err := merged.Merge(st); err != nil {
			t.Fatalf("merge share %d: %v", i, err)
		}
	}
	if got, want := merged.http(), one.http(); !reflect.DeepEqual(got, want) {
		t.Errorf("http of the merged shares:\n%+v\nwant one recorder's:\n%+v", got, want)
	}
	if got, want := merged.generator(5*time.Second), one.generator(5*time.Second); got != want {
		t.Errorf("generator of the merged shares: %+v; want %+v", got, want)
	}
	if got, want := merged.retries(), one.retries(); got != want {
		t.Errorf("retries of the merged shares: %+v; want %+v", got, want)
	}
	if got, want := merged.State(), one.State(); !reflect.DeepEqual(got, want) {
		t.Errorf("state of the merged shares differs from one recorder's (rows %d, want %d)", len(got.Rows), len(want.Rows))
	}
	if h := one.http(); h.Requests != 3000 || h.P99MS == 0 {
		t.Errorf("one recorder: %d requests from T, p99 %gms; want 3000 and a p99 (the test's own data)", h.Requests, h.P99MS)
	}
}

// A state is refused whole when it was recorded around another T or with
// other histogram settings; the recorder is left as it was.
func TestMergeRefusesAnotherShape(t *testing.T) {
	T := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := NewRecorder(T, time.Second, time.Second, false)
	other := NewRecorder(T.Add(time.Millisecond), time.Second, time.Second, false)
	if err := r.Merge(other.State()); err == nil || !strings.Contains(err.Error(), "want T") {
		t.Errorf("merge of another T: %v; want it refused naming T", err)
	}
	st := NewRecorder(T, time.Second, time.Second, false).State()
	two := hdrhistogram.New(1, result.MaxLatencyUS, 2) // two significant figures, not three
	_ = two.RecordValue(1000)                          // an empty one encodes as ""
	st.Latency = encode(two)
	st.Outcomes = map[load.Outcome]int64{load.OK: 5}
	if err := r.Merge(st); err == nil || !strings.Contains(err.Error(), "significant figures") {
		t.Errorf("merge of a histogram at other settings: %v; want it refused naming them", err)
	}
	if h := r.http(); h.Requests != 0 {
		t.Errorf("after a refused merge: %d requests; want 0, nothing added", h.Requests)
	}
}

// The encoding is HdrHistogram's own: a histogram encoded by the Java
// implementation (one value, 42, from hdrhistogram-go's tests) decodes.
func TestHistogramEncodingIsHdrHistogramsV2(t *testing.T) {
	h, err := hdrhistogram.Decode([]byte("HISTFAAAAB542pNpmSzMwMDAxAABzFCaEUoz2X+AMIKZAEARAtM="))
	if err != nil || h.TotalCount() != 1 || h.Mean() != 42 {
		t.Fatalf("decode a known encoding: %v; want one value, 42", err)
	}
	mine := result.NewHist(3)
	_ = mine.RecordValue(42)
	got, err := hdrhistogram.Decode([]byte(encode(mine)))
	if err != nil || got.TotalCount() != 1 || got.ValueAtQuantile(50) != 42 {
		t.Errorf("round trip of our encoding: %v; want one value, 42", err)
	}
	if s := encode(mine); !strings.HasPrefix(s, "HISTF") {
		t.Errorf("encoding %q; want HdrHistogram's V2 compressed base64 (HISTF...)", s)
	}
}
