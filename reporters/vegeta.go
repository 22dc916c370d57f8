package reporters

import (
	"bufio"
	"io"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
)

// VegetaResults writes every request of a run's measured windows (from
// T - before to the end of each arm; the warmup is the cache's fill, not
// measured) as vegeta results, in vegeta's own gob encoding (its attack's
// default output), so `vegeta report`, `vegeta plot` and `vegeta encode`
// read a herdbench run. Each result's Attack is its arm; its Timestamp is
// the request's intended send time and its Latency is counted from it, as
// herdbench counts (vegeta's CLI counts from the actual send), so vegeta's
// percentiles are herdbench's; a request owed and never sent is a result
// with no status and the error "herdbench: unsent". It is an
// experiment.Observer, safe for concurrent use.
type VegetaResults struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc vegeta.Encoder
	err error // the first encoding error; nothing is written after it
}

var _ experiment.Observer = (*VegetaResults)(nil)

// NewVegetaResults writes to w; Flush ends the writing.
func NewVegetaResults(w io.Writer) *VegetaResults {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &VegetaResults{w: bw, enc: vegeta.NewEncoder(bw)}
}

// errUnsent is an unsent request's error in vegeta's results.
const errUnsent = "herdbench: unsent (the generator was behind its schedule when the load ended)"

// Request writes r, unless it is the warmup's.
func (v *VegetaResults) Request(arm, phase string, r load.Record) {
	if phase == experiment.PhaseWarmup {
		return
	}
	res := VegetaResult(arm, r)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		v.err = v.enc.Encode(&res)
	}
}

// VegetaResult is r as vegeta's result of the attack named arm.
func VegetaResult(arm string, r load.Record) vegeta.Result {
	res := vegeta.Result{Attack: arm, Seq: r.Seq, Code: uint16(r.Code), Timestamp: r.Intended, Latency: r.Latency,
		BytesOut: r.BytesOut, Error: r.Error, Method: r.Method, URL: r.URL}
	if r.Outcome == load.Unsent {
		res.Error = errUnsent
	}
	return res
}

// Flush writes what is buffered, and says whether every result was
// written.
func (v *VegetaResults) Flush() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		v.err = v.w.Flush()
	}
	return v.err
}

// Arm does nothing: each result names its arm.
func (*VegetaResults) Arm(string, bool) {}

// Trigger does nothing: T is where the results' timestamps show the herd.
func (*VegetaResults) Trigger(string, time.Time) {}
