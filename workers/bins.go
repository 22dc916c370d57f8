package workers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// While an arm runs, the controller fetches each worker's bins every
// StreamEvery (GET pathBins?since=N, N the bins it has so far, which the
// worker may then forget) and merges them into the arm's recorder
// (experiment.Bin): the live figures, the stop conditions, the live judge
// of --after auto, the progress line and the verdict read the merged
// recorder as they read one of a load sent from this process. The
// controller's cost is the bins', a few a worker every StreamEvery
// whatever the rate (docs/distributed.md, "What one controller serves").
// The workers' recorders, returned at the arm's end, give each worker's
// own figures and a check: the bins must hold every request the worker
// filed, each once. A bin of another run, arm or worker, one sent twice or
// out of its order, or one that does not decode fails the arm naming the
// worker: nothing is merged that the worker did not send for this arm.

const pathBins = "/v1/bins" // GET ?run=ID&boot=B&since=N: the bins sealed from the Nth on

// maxBins bounds one answer's bins; a worker with more left is asked
// again at once.
const maxBins = 5_000

// Bins is a worker's answer on pathBins.
type Bins struct {
	Since int64            `json:"since"` // the first bin's number
	Bins  []experiment.Bin `json:"bins"`  // in the order sealed
	// FiledUpTo is the instant up to which every request of its stripe
	// is in these bins or earlier ones (zero: none yet)
	FiledUpTo time.Time `json:"filed_up_to"`
	// Heard is the worker's clock when it answered: every request that
	// ended before it is in these bins or earlier ones
	Heard time.Time `json:"heard"`
	Done  bool      `json:"done"` // the share has ended: these are its last
}

// binned is a running share's bins not yet taken by the controller.
type binned struct {
	mu     sync.Mutex
	binner *experiment.Binner
	base   int64 // sealed[0]'s number
	sealed []experiment.Bin
}

// from seals the open bins and answers those from the nth on; those
// before n are forgotten.
func (b *binned) from(n int64, done bool) (Bins, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.binner == nil {
		return Bins{Since: n, Heard: time.Now()}, nil // not started
	}
	filed := b.binner.FiledUpTo()
	b.sealed = append(b.sealed, b.binner.Seal()...)
	if n < b.base || n > b.base+int64(len(b.sealed)) {
		return Bins{}, fmt.Errorf("bins from %d: this worker holds %d to %d", n, b.base, b.base+int64(len(b.sealed)))
	}
	b.sealed = b.sealed[n-b.base:]
	b.base = n
	k := min(len(b.sealed), maxBins)
	return Bins{Since: n, Bins: b.sealed[:k:k], FiledUpTo: filed, Heard: time.Now(), Done: done && k == len(b.sealed)}, nil
}

func (w *Worker) bins(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	j, err := w.current(q.Get("run"), q.Get("boot"))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	n, err := strconv.ParseInt(q.Get("since"), 10, 64)
	if err != nil {
		http.Error(rw, "since: "+err.Error(), http.StatusBadRequest)
		return
	}
	done := false
	select {
	case <-j.done: // every request is filed: the seal below holds the last
		done = true
	default:
	}
	bins, err := j.binned.from(n, done)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusConflict)
		return
	}
	writeJSON(rw, http.StatusOK, bins)
}

// badBin is a bin the controller refuses: the arm fails naming the worker.
type badBin struct{ error }

// binFollower merges one worker's bins into the arm's recorder.
type binFollower struct {
	p       *prepared
	i       int
	rec     *experiment.Recorder
	t       time.Time
	next    int64             // the next bin's number
	seen    map[[2]int64]bool // (row, part) merged
	filed   []atomic.Int64    // each worker's FiledUpTo (Unix ns), shared by the followers
	pastCut *atomic.Int64     // requests in bins past the arm's cut
	merged  int64             // requests in the bins merged or past the cut
}

// take checks bin b of the worker and merges it, or counts it past the
// arm's cut (the cut falls at a row's end: ending.cut).
func (f *binFollower) take(b experiment.Bin) error {
	switch {
	case b.Run != f.p.run:
		return badBin{fmt.Errorf("bin %d is of run %s; want %s (another run's or arm's)", b.Seq, b.Run, f.p.run)}
	case b.Worker != f.i:
		return badBin{fmt.Errorf("bin %d is worker %d's; want %d", b.Seq, b.Worker, f.i)}
	case b.Seq < f.next:
		return badBin{fmt.Errorf("bin %d sent again (a duplicate): %d bins already merged", b.Seq, f.next)}
	case b.Seq > f.next:
		return badBin{fmt.Errorf("bin %d where bin %d was due: bins lost", b.Seq, f.next)}
	case f.seen[[2]int64{b.Row, int64(b.Part)}]:
		return badBin{fmt.Errorf("bin %d: row %d part %d sent twice (a duplicate)", b.Seq, b.Row, b.Part)}
	}
	f.next++
	f.seen[[2]int64{b.Row, int64(b.Part)}] = true
	f.merged += b.State.Records
	if at, ok := f.p.job.Cut.When(); ok && b.Row > result.RowIndex(at, f.t) {
		f.pastCut.Add(b.State.Records) // the cut reached it late: past the arm's end
		return nil
	}
	if err := f.rec.MergeBin(b); err != nil {
		return badBin{fmt.Errorf("bin %d (row %d): %w", b.Seq, b.Row, err)}
	}
	return nil
}

// followBins merges worker i's bins into rec every StreamEvery until its
// share has ended, and returns how many requests its bins held; heard is
// set to the instant its requests are merged up to (the largest one once
// all are), and rec's filed mark to the least of the workers'.
func (p *prepared) followBins(ctx context.Context, f *binFollower) (int64, error) {
	w := p.workers[f.i]
	tick := time.NewTicker(StreamEvery)
	defer tick.Stop()
	for {
		q := url.Values{"run": {p.run}, "boot": {w.ready.Boot}, "since": {strconv.FormatInt(f.next, 10)}}
		var bins Bins
		if err := p.c.get(ctx, w.url+pathBins+"?"+q.Encode(), &bins); err != nil {
			return f.merged, err
		}
		for _, b := range bins.Bins {
			if err := f.take(b); err != nil {
				return f.merged, err
			}
		}
		if !bins.FiledUpTo.IsZero() {
			// intended instants are the schedule's, the same on every worker
			f.filed[f.i].Store(bins.FiledUpTo.UnixNano())
			least := int64(math.MaxInt64)
			for i := range f.filed {
				least = min(least, f.filed[i].Load())
			}
			if least > 0 {
				f.rec.MarkFiled(time.Unix(0, least))
			}
		}
		if bins.Done {
			p.heard[f.i].Store(math.MaxInt64)
			return f.merged, nil
		}
		p.heard[f.i].Store(bins.Heard.Add(-w.ready.Offset).UnixNano()) // on worker 0's clock
		if len(bins.Bins) == maxBins {
			continue // more waiting
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return f.merged, ctx.Err()
		}
	}
}

// isBadBin says whether err is a bin the controller refused.
func isBadBin(err error) bool {
	var b badBin
	return errors.As(err, &b)
}
