package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herdbench/herdbench/load"
)

// While an arm runs, the controller fetches each worker's records every
// StreamEvery (GET pathRecords?since=N, N the records it has so far, which
// the worker may then forget) and files them into the arm's recorder one
// by one, as a load sent from this process files its own: the live
// figures, the stop conditions, the live judge of --after auto, the
// progress line and --metrics-addr read them as they come. The workers'
// recorders, returned at the arm's end, give each worker's own figures and
// a check: the records streamed must be every record the worker filed,
// each once. When the arm is over early (its verdict, a stop condition),
// the controller sends the cut to every worker (POST pathCut): each cuts
// its schedule at that instant on its own clock; requests in flight are
// answered and streamed.

// StreamEvery is how often the controller fetches the workers' records.
const StreamEvery = 100 * time.Millisecond

// maxStreamed bounds one answer's records; a worker with more left is
// asked again at once.
const maxStreamed = 50_000

const (
	pathRecords = "/v1/records" // GET ?run=ID&boot=B&since=N: the records filed from the Nth on
	pathCut     = "/v1/cut"     // POST a CutAt: no request due after its instant is sent
)

// Records is a worker's answer on pathRecords.
type Records struct {
	Since   int64        `json:"since"`   // the first record's number
	Records []wireRecord `json:"records"` // in the order filed
	// Heard is the worker's clock when it answered: every request that
	// ended before it is in these records or earlier ones
	Heard time.Time `json:"heard"`
	Done  bool      `json:"done"` // the share has ended: these are its last
}

// CutAt tells a worker to cut its schedule at At, on its own clock.
type CutAt struct {
	Run  string    `json:"run"`
	Boot string    `json:"boot"`
	At   time.Time `json:"at"`
}

// wireRecord is a load.Record as streamed: what the recorder and the live
// metrics read of it, its instants in nanoseconds from T (short keys: a
// record is streamed once per request).
type wireRecord struct {
	Seq      uint64       `json:"q"`
	Intended int64        `json:"i"`
	Left     *int64       `json:"l,omitempty"` // nil: never left (Unsent)
	Latency  int64        `json:"d,omitempty"`
	Outcome  load.Outcome `json:"o"`
	Attempts int          `json:"a,omitempty"`
	Hedges   int          `json:"h,omitempty"`
	SentAt   []int64      `json:"s,omitempty"`
	Code     int          `json:"c,omitempty"`
	Cache    string       `json:"x,omitempty"`
	Critical bool         `json:"k,omitempty"`
	Class    int          `json:"n,omitempty"`
	// what vegeta's results hold, streamed only when the share asks
	// (Share.Vegeta): each adds its bytes to every record
	Method   string `json:"m,omitempty"`
	URL      string `json:"u,omitempty"`
	Error    string `json:"e,omitempty"`
	BytesOut uint64 `json:"b,omitempty"`
}

// toWire is r as streamed, its instants from t; vegeta: with what
// vegeta's results hold of it.
func toWire(r load.Record, t time.Time, vegeta bool) wireRecord {
	w := wireRecord{Seq: r.Seq, Intended: int64(r.Intended.Sub(t)), Latency: int64(r.Latency), Outcome: r.Outcome, Attempts: r.Attempts,
		Hedges: r.Hedges, Code: r.Code, Cache: r.Cache, Critical: r.Critical, Class: r.Class}
	if vegeta {
		w.Method, w.URL, w.Error, w.BytesOut = r.Method, r.URL, r.Error, r.BytesOut
	}
	if !r.Left.IsZero() {
		l := int64(r.Left.Sub(t))
		w.Left = &l
	}
	for _, at := range r.SentAt {
		w.SentAt = append(w.SentAt, int64(at.Sub(t)))
	}
	return w
}

func (w wireRecord) record(t time.Time) load.Record {
	r := load.Record{Seq: w.Seq, Intended: t.Add(time.Duration(w.Intended)), Latency: time.Duration(w.Latency), Outcome: w.Outcome,
		Attempts: w.Attempts, Hedges: w.Hedges, Code: w.Code, Cache: w.Cache, Critical: w.Critical, Class: w.Class,
		Method: w.Method, URL: w.URL, Error: w.Error, BytesOut: w.BytesOut}
	if w.Left != nil {
		r.Left = t.Add(time.Duration(*w.Left))
	}
	for _, at := range w.SentAt {
		r.SentAt = append(r.SentAt, t.Add(time.Duration(at)))
	}
	return r
}

// stream is a running share's records not yet taken by the controller.
type stream struct {
	mu     sync.Mutex
	t      time.Time // T: the records' instants are from it
	vegeta bool      // with what vegeta's results hold (Share.Vegeta)
	base   int64     // buf[0]'s number
	buf    []wireRecord
}

func (s *stream) add(r load.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, toWire(r, s.t, s.vegeta))
}

// from answers the records from the nth on; those before n are forgotten.
func (s *stream) from(n int64, done bool) (Records, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < s.base || n > s.base+int64(len(s.buf)) {
		return Records{}, fmt.Errorf("records from %d: this worker holds %d to %d", n, s.base, s.base+int64(len(s.buf)))
	}
	s.buf = s.buf[n-s.base:]
	s.base = n
	k := min(len(s.buf), maxStreamed)
	return Records{Since: n, Records: s.buf[:k:k], Heard: time.Now(), Done: done && k == len(s.buf)}, nil
}

func (w *Worker) records(rw http.ResponseWriter, r *http.Request) {
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
	case <-j.done: // every record is in
		done = true
	default:
	}
	recs, err := j.stream.from(n, done)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusConflict)
		return
	}
	writeJSON(rw, http.StatusOK, recs)
}

func (w *Worker) cut(rw http.ResponseWriter, r *http.Request) {
	var c CutAt
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(rw, "cut: "+err.Error(), http.StatusBadRequest)
		return
	}
	j, err := w.current(c.Run, c.Boot)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	j.cut.At(c.At)
	w.Log.Info("cut", "run", c.Run, "at", c.At, "late", time.Since(c.At))
	rw.WriteHeader(http.StatusNoContent)
}

// follow files worker i's records through file every StreamEvery until
// its share has ended, and returns how many it streamed; heard is set to
// the instant its records are filed up to (the largest one once all are).
func (p *prepared) follow(ctx context.Context, i int, t time.Time, file func(load.Record), heard *atomic.Int64) (int64, error) {
	w := p.workers[i]
	tick := time.NewTicker(StreamEvery)
	defer tick.Stop()
	var n int64
	for {
		q := url.Values{"run": {p.run}, "boot": {w.ready.Boot}, "since": {strconv.FormatInt(n, 10)}}
		var recs Records
		if err := p.c.get(ctx, w.url+pathRecords+"?"+q.Encode(), &recs); err != nil {
			return n, err
		}
		for _, r := range recs.Records {
			file(r.record(t))
		}
		n += int64(len(recs.Records))
		if recs.Done {
			heard.Store(math.MaxInt64)
			return n, nil
		}
		heard.Store(recs.Heard.Add(-w.ready.Offset).UnixNano()) // on worker 0's clock
		if len(recs.Records) == maxStreamed {
			continue // more waiting
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
}

// Heard is the instant every request of the arm that ended before it has
// been filed: the least of the workers' (experiment.Hearer).
func (p *prepared) Heard() time.Time {
	least := int64(math.MaxInt64)
	for i := range p.heard {
		least = min(least, p.heard[i].Load())
	}
	return time.Unix(0, least)
}

// passCut sends the arm's cut to every worker once it is made, until done
// is closed; best effort: a worker that misses it sends its schedule to
// the end, and its records past the cut are not filed.
func (p *prepared) passCut(done <-chan struct{}) {
	c := p.job.Cut
	select {
	case <-c.Done():
	case <-done:
		return
	}
	at, _ := c.When()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = each(len(p.workers), func(i int) error {
		w := p.workers[i]
		return p.c.post(ctx, w.url+pathCut, CutAt{Run: p.run, Boot: w.ready.Boot, At: at}, nil)
	})
}
