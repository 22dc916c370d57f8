package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
)

// RecorderState is what a Recorder holds, to move between processes: a
// worker records its share of an arm and the controller merges the shares
// (Merge) as if one client had sent everything. Counts are kept as they
// are; every histogram is in HdrHistogram's V2 compressed encoding (base64,
// as HdrHistogram's own logs write it), which loses nothing, and "" for an
// empty one. A worker's bins (Bin) are states too, of a few requests each.
type RecorderState struct {
	T        time.Time              `json:"t"`
	Before   time.Duration          `json:"before"`
	After    time.Duration          `json:"after"`
	Rows     map[int64]RowState     `json:"rows"`
	Latency  string                 `json:"latency"`  // from T
	Baseline string                 `json:"baseline"` // [T - before, T)
	Outcomes map[load.Outcome]int64 `json:"outcomes"` // from T
	Attempts int64                  `json:"attempts"`
	Hedges   int64                  `json:"hedges"`
	Stale    int64                  `json:"stale"`
	Local    int64                  `json:"local"`
	Records  int64                  `json:"records"`
	Sends    int64                  `json:"sends"` // attempts of every record
	Critical *ClassState            `json:"critical,omitempty"`
	Intended int64                  `json:"intended"` // the generator's figures
	Sent     int64                  `json:"sent"`
	Lag      string                 `json:"lag"`
	// Live is what the stop conditions read, by completion row; only a
	// recorder of a plan with stop conditions keeps it
	Live map[int64]LiveState `json:"live,omitempty"`
	// Phases is a bin's requests by phase (PhaseWarmup, PhaseBefore,
	// PhaseAfter), for the observer of the recorder it is merged into
	Phases map[string]LiveState `json:"phases,omitempty"`
	// Classes are each request class's own, by Record.Class; only a
	// recorder of a target's several classes keeps them (FileClasses)
	Classes []ClassesState `json:"classes,omitempty"`
}

// LiveState is one completion row of the live window.
type LiveState struct {
	Outcomes []int64 `json:"outcomes"` // by load.Outcome
	Attempts int64   `json:"attempts"`
	Latency  string  `json:"latency"`
}

// RowState is one timeline row of a RecorderState.
type RowState struct {
	Requests int64  `json:"requests"`
	OK       int64  `json:"ok"`
	Attempts int64  `json:"attempts"`
	Unsent   int64  `json:"unsent"`
	Latency  string `json:"latency"`
}

// ClassState is the critical requests' share of a RecorderState.
type ClassState struct {
	Requests int64  `json:"requests"`
	OK       int64  `json:"ok"`
	Shed     int64  `json:"shed"`
	Latency  string `json:"latency"`
}

// State is what r holds now.
func (r *Recorder) State() RecorderState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := RecorderState{T: r.t, Before: r.t.Sub(r.from), After: r.end.Sub(r.t), Rows: make(map[int64]RowState, len(r.rows)),
		Latency: encode(r.after), Baseline: encode(r.baseline), Outcomes: make(map[load.Outcome]int64, len(r.outcomes)),
		Attempts: r.attempts, Hedges: r.hedges, Stale: r.stale, Local: r.local, Records: r.sent, Sends: r.sends,
		Intended: r.gen.intended, Sent: r.gen.sent, Lag: encode(r.gen.lag)}
	for i, row := range r.rows {
		st.Rows[i] = RowState{Requests: row.requests, OK: row.ok, Attempts: row.attempts, Unsent: row.unsent, Latency: encode(row.hist)}
	}
	for o, n := range r.outcomes {
		st.Outcomes[o] = n
	}
	if c := r.critical; c != nil {
		st.Critical = &ClassState{Requests: c.requests, OK: c.ok, Shed: c.shed, Latency: encode(c.hist)}
	}
	for _, b := range r.live {
		if b.hist == nil || (b.hist.TotalCount() == 0 && b.attempts == 0) {
			continue
		}
		if st.Live == nil {
			st.Live = map[int64]LiveState{}
		}
		st.Live[b.at] = LiveState{Outcomes: slices.Clone(b.outcomes[:]), Attempts: b.attempts, Latency: encode(b.hist)}
	}
	for _, c := range r.classes {
		st.Classes = append(st.Classes, c.state())
	}
	for ph, b := range r.phases {
		if b.hist.TotalCount() == 0 {
			continue
		}
		if st.Phases == nil {
			st.Phases = map[string]LiveState{}
		}
		st.Phases[ph] = LiveState{Outcomes: slices.Clone(b.outcomes[:]), Attempts: b.attempts, Latency: encode(b.hist)}
	}
	return st
}

// Merge adds st to r: counts add up, histograms merge. It refuses a state
// of another T or window, or whose histograms were recorded with other
// settings, and then changes nothing.
func (r *Recorder) Merge(st RecorderState) error { return r.merge("", st) }

// MergeBin merges b's state as Merge does; the observer's summaries of its
// requests name b's worker.
func (r *Recorder) MergeBin(b Bin) error { return r.merge(strconv.Itoa(b.Worker), b.State) }

// merge is Merge of worker's st ("": none told).
func (r *Recorder) merge(worker string, st RecorderState) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !st.T.Equal(r.t) || st.Before != r.t.Sub(r.from) || st.After != r.end.Sub(r.t) {
		return fmt.Errorf("recorded around T %s (-%s, +%s); want T %s (-%s, +%s)",
			st.T.Format(time.RFC3339Nano), st.Before, st.After, r.t.Format(time.RFC3339Nano), r.t.Sub(r.from), r.end.Sub(r.t))
	}
	if (st.Critical != nil) != (r.critical != nil) {
		return errors.New("critical requests counted apart in one share and not in another")
	}
	// decode everything before adding anything
	var errs []error
	dec := func(what, s string, like *hdrhistogram.Histogram) *hdrhistogram.PackedHistogram {
		h, err := decode(s, like)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
		return h
	}
	after, baseline, lag := dec("latency", st.Latency, r.after), dec("baseline", st.Baseline, r.baseline), dec("lag", st.Lag, r.gen.lag)
	rows := make(map[int64]*hdrhistogram.PackedHistogram, len(st.Rows))
	for i, row := range st.Rows {
		rows[i] = dec(fmt.Sprintf("timeline row %d", i), row.Latency, rowLike)
	}
	live := make(map[int64]*hdrhistogram.PackedHistogram, len(st.Live))
	for i, l := range st.Live {
		if len(l.Outcomes) > int(load.NumOutcomes) {
			errs = append(errs, fmt.Errorf("live row %d: %d outcomes; want at most %d", i, len(l.Outcomes), load.NumOutcomes))
		}
		live[i] = dec(fmt.Sprintf("live row %d", i), l.Latency, rowLike)
	}
	phases := make(map[string]*hdrhistogram.PackedHistogram, len(st.Phases))
	for ph, l := range st.Phases {
		if len(l.Outcomes) > int(load.NumOutcomes) || !slices.Contains(Phases, ph) {
			errs = append(errs, fmt.Errorf("phase %q: %d outcomes; want one of %v, at most %d", ph, len(l.Outcomes), Phases, load.NumOutcomes))
		}
		phases[ph] = dec("phase "+ph, l.Latency, rowLike)
	}
	var crit *hdrhistogram.PackedHistogram
	if st.Critical != nil {
		crit = dec("critical", st.Critical.Latency, r.critical.hist)
	}
	classes, err := r.decodeClasses(st.Classes)
	if err := errors.Join(append(errs, err)...); err != nil {
		return err
	}
	r.addCounts(st, after, baseline, lag, rows, crit)
	r.addClasses(st.Classes, classes)
	if r.liveOn {
		for i, l := range st.Live {
			r.mergeLive(i, l, live[i])
		}
	}
	if r.observer != nil {
		for _, ph := range Phases {
			if l, ok := st.Phases[ph]; ok {
				sum := summary(l, phases[ph])
				sum.Worker = worker
				r.observer(ph, sum)
			}
		}
	}
	return nil
}

// addCounts adds st's counts and its decoded histograms to r's (Merge,
// once every histogram of st has decoded).
func (r *Recorder) addCounts(st RecorderState, after, baseline, lag *hdrhistogram.PackedHistogram,
	rows map[int64]*hdrhistogram.PackedHistogram, crit *hdrhistogram.PackedHistogram) {
	mergeInto(r.after, after)
	mergeInto(r.baseline, baseline)
	mergeInto(r.gen.lag, lag)
	for i, row := range st.Rows {
		mine := r.row(i)
		mine.requests += row.Requests
		mine.ok += row.OK
		mine.attempts += row.Attempts
		mine.unsent += row.Unsent
		mergeInto(mine.hist, rows[i])
	}
	for o, n := range st.Outcomes {
		r.outcomes[o] += n
	}
	r.attempts += st.Attempts
	r.hedges += st.Hedges
	r.stale += st.Stale
	r.local += st.Local
	r.sent += st.Records
	r.sends += st.Sends
	r.gen.intended += st.Intended
	r.gen.sent += st.Sent
	if c := st.Critical; c != nil {
		r.critical.requests += c.Requests
		r.critical.ok += c.OK
		r.critical.shed += c.Shed
		mergeInto(r.critical.hist, crit)
	}
}

// rowLike has the settings of a timeline row's histogram.
var rowLike = result.NewHist(RowDigits)

// mergeInto adds from (nil: empty) to h.
func mergeInto(h *hdrhistogram.Histogram, from *hdrhistogram.PackedHistogram) {
	if from != nil {
		from.MergeInto(h)
	}
}

// Generator is how the generator of r's requests kept its schedule from T
// - before over window (a worker's share, for one).
func (r *Recorder) Generator(window time.Duration) result.LoadFigures { return r.generator(window) }

func encode(h *hdrhistogram.Histogram) string {
	if h.TotalCount() == 0 {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		panic(fmt.Sprintf("encode a histogram: %v", err)) // only an unknown version fails
	}
	return string(b)
}

// decode reads an encoded histogram recorded with like's settings; "" is
// an empty one (nil). It decodes into HdrHistogram's sparse form, whose
// size is the buckets it holds, not the range: a bin of a few hundred
// requests costs the merge a few hundred buckets.
func decode(s string, like *hdrhistogram.Histogram) (*hdrhistogram.PackedHistogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdrhistogram.DecodePacked([]byte(s))
	if err != nil {
		return nil, err
	}
	if h.LowestTrackableValue() != like.LowestTrackableValue() || h.HighestTrackableValue() != like.HighestTrackableValue() ||
		h.SignificantFigures() != like.SignificantFigures() {
		return nil, fmt.Errorf("recorded %d..%d at %d significant figures; want %d..%d at %d",
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(),
			like.LowestTrackableValue(), like.HighestTrackableValue(), like.SignificantFigures())
	}
	return h, nil
}
