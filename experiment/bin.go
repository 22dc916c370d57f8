package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
)

// A worker summarises its share of an arm in bins, and the controller
// merges the bins into the arm's recorder (Merge): its cost grows with the
// workers and the bins, not with the requests.
//
// A bin is the requests of one worker intended in one timeline row
// (RowWidth, from T) that it filed in one stretch between two fetches,
// summarised by a Recorder of their own: exact counts (intended, sent,
// unsent, ok, each outcome, attempts, retries' amplification, hedges,
// stale and local answers, the critical class, the live window's) and
// latencies, from each request's intended instant, as HdrHistograms in
// HdrHistogram's V2 compressed encoding (RecorderState). A row whose
// requests end over several fetches comes in several parts. Merging adds
// counts and the histograms' buckets, so the merged recorder is the one
// that every request filed into one recorder would have made: counts
// equal, and each histogram bucket for bucket
// (TestBinsMergeToOneRecorder).
//
// The histograms keep the recorder's settings: BinDigits significant
// digits for the arm's latency, the baseline's and the generator's lag,
// RowDigits for a timeline row's and the live window's. A value is held
// by its bucket, at most 1/1024 of the value wide at 3 digits (1/128 at
// 2), so a percentile or a maximum read from a histogram is within
// LatencyBound of the exact one read from every latency (rounded to the
// microsecond, as recorded), whether one recorder or merged bins made it.
const (
	BinDigits = 3
	RowDigits = 2
	// LatencyBound is the relative error of p50, p99 and max at BinDigits:
	// a bucket's width over its lowest value, 2^-10
	LatencyBound = 1.0 / 1024
)

// Bin is one bin of a worker's share, as it travels.
type Bin struct {
	Run    string        `json:"run"`    // the arm's run, as the controller named it
	Worker int           `json:"worker"` // the worker's index
	Seq    int64         `json:"seq"`    // the worker's bins are numbered from 0, in the order sealed
	Row    int64         `json:"row"`    // the row of its requests' intended instants (result.RowIndex)
	Part   int           `json:"part"`   // the row's parts from 0, in the order sealed
	State  RecorderState `json:"state"`
}

// Binner files one worker's requests into bins.
type Binner struct {
	run      string
	worker   int
	stripes  uint64
	t        time.Time
	before   time.Duration
	after    time.Duration
	critical bool
	live     bool
	classes  int // request classes counted apart (FileClasses)

	mu    sync.Mutex
	open  map[int64]*Recorder // by row: filed since the last Seal
	parts map[int64]int       // by row: the next part's number
	free  []*Recorder         // sealed, emptied, to be used again
	seq   int64               // the next bin's number
	filed filedMark           // over the stripe's own numbering: Seq / stripes
}

// NewBinner bins the requests of stripe worker of stripes, for the arm
// run whose trigger fires at t; critical: the critical requests counted
// apart; live: the live window kept (the plan has stop conditions).
func NewBinner(run string, worker, stripes int, t time.Time, before, after time.Duration, critical, live bool) *Binner {
	return &Binner{run: run, worker: worker, stripes: uint64(max(stripes, 1)), t: t, before: before, after: after,
		critical: critical, live: live, open: map[int64]*Recorder{}, parts: map[int64]int{}}
}

// FileClasses makes each bin count each of n request classes on its own
// (Recorder.FileClasses); before the first Add.
func (b *Binner) FileClasses(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.classes = n
}

// Add files rec into its row's open bin.
func (b *Binner) Add(rec load.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.filed.add(rec.Seq/b.stripes, rec.Intended)
	i := result.RowIndex(rec.Intended, b.t)
	r := b.open[i]
	if r == nil {
		if n := len(b.free); n > 0 {
			r, b.free = b.free[n-1], b.free[:n-1]
		} else {
			r = NewRecorder(b.t, b.before, b.after, b.critical)
			r.FileClasses(b.classes)
			r.liveOn = b.live
			r.phases = map[string]*liveBucket{}
		}
		b.open[i] = r
	}
	r.Add(rec)
}

// Seal closes the open bins, one a row filed into since the last Seal, in
// the order of their rows, and returns them.
func (b *Binner) Seal() []Bin {
	b.mu.Lock()
	defer b.mu.Unlock()
	rows := slices.Sorted(maps.Keys(b.open))
	bins := make([]Bin, 0, len(rows))
	for _, i := range rows {
		r := b.open[i]
		bins = append(bins, Bin{Run: b.run, Worker: b.worker, Seq: b.seq, Row: i, Part: b.parts[i], State: r.State()})
		b.seq++
		b.parts[i]++
		r.reset()
		b.free = append(b.free, r)
		delete(b.open, i)
	}
	return bins
}

// FiledUpTo is the instant up to which every request of the worker's
// stripe has been filed; zero before its first.
func (b *Binner) FiledUpTo() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.filed.upTo == 0 {
		return time.Time{}
	}
	return time.Unix(0, b.filed.upTo)
}

// MarkFiled notes that every request of r's schedule due up to at has
// been merged: the workers' bins say how far each stripe is filed, and the
// least of them holds for the whole schedule.
func (r *Recorder) MarkFiled(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := at.UnixNano(); n > r.filed.upTo {
		r.filed.upTo = n
	}
}

// reset empties r, its histograms kept, for another bin.
func (r *Recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.rows)
	clear(r.outcomes)
	r.after.Reset()
	r.baseline.Reset()
	r.gen.lag.Reset()
	r.gen.intended, r.gen.sent = 0, 0
	r.attempts, r.hedges, r.stale, r.local, r.sent, r.sends = 0, 0, 0, 0, 0, 0
	if c := r.critical; c != nil {
		c.hist.Reset()
		*c = classAcc{hist: c.hist}
	}
	for i := range r.live {
		if h := r.live[i].hist; h != nil {
			h.Reset()
			r.live[i] = liveBucket{hist: h}
		}
	}
	r.filed = filedMark{}
	for _, b := range r.phases {
		b.hist.Reset()
		*b = liveBucket{hist: b.hist}
	}
	for _, c := range r.classes {
		c.reset()
	}
}

// SameCounts says where r, merged from bins, differs from whole, the
// workers' own recorders merged: every count, row and histogram must be
// the same, the live window and the phases aside (only bins keep them).
func (r *Recorder) SameCounts(whole *Recorder) error {
	got, want := r.State(), whole.State()
	got.Live, got.Phases = nil, nil
	want.Live, want.Phases = nil, nil
	if got.T.Equal(want.T) {
		got.T = want.T // one came through JSON: another location's reading
	}
	gb, gerr := json.Marshal(got)
	wb, werr := json.Marshal(want)
	if err := errors.Join(gerr, werr); err != nil {
		return fmt.Errorf("the bins merged against the workers' recorders: %w", err)
	}
	if bytes.Equal(gb, wb) {
		return nil
	}
	// the first field that differs, by its name in the state's JSON
	var gm, wm map[string]json.RawMessage
	_, _ = json.Unmarshal(gb, &gm), json.Unmarshal(wb, &wm)
	field := "rows"
	for _, k := range slices.Sorted(maps.Keys(gm)) {
		if !bytes.Equal(gm[k], wm[k]) {
			field = k
			break
		}
	}
	return fmt.Errorf("the bins merged differ from the workers' recorders in %s: %d requests (%d intended, %d sent, %d rows) against %d (%d intended, %d sent, %d rows)",
		field, got.Records, got.Intended, got.Sent, len(got.Rows), want.Records, want.Intended, want.Sent, len(want.Rows))
}

// HTTPFigures are the http figures of r's requests from T, as the results
// have them.
func (r *Recorder) HTTPFigures() result.HTTP { return r.http() }
