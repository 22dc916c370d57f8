package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// RowCounter is one of a subject's counters the timeline reads every row
// (Row.Counts) and the loop compares after the trigger with before
// (Loop.Counts, at Name+"_rps"): the testbed's replicas declare their
// loads, failed loads, new connections and given-up waits. Label names it
// in the loop's held_by ("load errors x12").
type RowCounter struct{ Name, Label string }

var declaredRows struct {
	names []RowCounter
}

// DeclareRowCounters makes cs counters a subject kind's rows may hold, in
// their order: a kind calls it once, as it registers (testbed/subject's
// init), beside DeclareCounters.
func DeclareRowCounters(cs ...RowCounter) {
	declared.Lock()
	defer declared.Unlock()
	for _, c := range cs {
		if !slices.Contains(declaredRows.names, c) {
			declaredRows.names = append(declaredRows.names, c)
		}
	}
}

// DeclaredRowCounters are the row counters every kind declared, in order.
func DeclaredRowCounters() []RowCounter {
	declared.Lock()
	defer declared.Unlock()
	return slices.Clone(declaredRows.names)
}

// rowTail is a Row's fields after its counters, as the results write them.
type rowTail struct {
	LBRequests int64            `json:"lb_requests,omitempty"`
	LBSent     int64            `json:"lb_sent,omitempty"`
	LBQueue    int64            `json:"lb_queue,omitempty"`
	LBServers  map[string]int64 `json:"lb_servers,omitempty"`
	LBWeights  map[string]int64 `json:"lb_weights,omitempty"`
	Replicas   map[string]int64 `json:"replicas,omitempty"`
}

// MarshalJSON writes r with its counters (each not 0: the declared ones
// in their order, then any other by name) after the write herd's fields,
// before the load balancer's.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	var kv [][]byte
	for _, name := range countNames(r.Counts) {
		if v := r.Counts[name]; v != 0 {
			kv = append(kv, fmt.Appendf(nil, "%q:%d", name, v))
		}
	}
	return spliced(plain(r), rowTail{r.LBRequests, r.LBSent, r.LBQueue, r.LBServers, r.LBWeights, r.Replicas}, kv)
}

// UnmarshalJSON reads a row and its counters: every whole number under a
// name the row's own fields do not take, so a results file reads the
// same whichever kinds the reading program declares.
func (r *Row) UnmarshalJSON(b []byte) error {
	type plain Row
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	own, err := plainJSON(plain(*r))
	if err != nil {
		return err
	}
	var all, known map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	if err := json.Unmarshal(own, &known); err != nil {
		return err
	}
	r.Counts = nil
	for name, raw := range all {
		var v int64
		if _, ok := known[name]; ok || json.Unmarshal(raw, &v) != nil {
			continue
		}
		if r.Counts == nil {
			r.Counts = map[string]int64{}
		}
		r.Counts[name] = v
	}
	return nil
}

// countNames are the names of counts, the declared ones first in their
// order, then the others sorted.
func countNames[V any](counts map[string]V) []string {
	var out []string
	for _, c := range DeclaredRowCounters() {
		out = append(out, c.Name)
	}
	var rest []string
	for name := range counts {
		if !slices.Contains(out, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// loopTail is a Loop's fields after its counters.
type loopTail struct {
	MissesRPS *LoopFigure `json:"misses_rps"`
	HeldBy    string      `json:"held_by,omitempty"`
}

// MarshalJSON writes l with every declared counter's figure (null where
// it has none: a subject that does not count it), then any other it
// holds, by name, after db_qps.
func (l Loop) MarshalJSON() ([]byte, error) {
	type plain Loop
	var kv [][]byte
	for _, name := range countNames(l.Counts) {
		v, err := json.Marshal(l.Counts[name])
		if err != nil {
			return nil, err
		}
		kv = append(kv, fmt.Appendf(nil, "%q:%s", name+"_rps", v))
	}
	return spliced(plain(l), loopTail{l.MissesRPS, l.HeldBy}, kv)
}

// UnmarshalJSON reads a loop and its counters' figures: every NAME_rps
// but misses_rps, whichever kinds the reading program declares.
func (l *Loop) UnmarshalJSON(b []byte) error {
	type plain Loop
	if err := json.Unmarshal(b, (*plain)(l)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	l.Counts = nil
	for key, raw := range all {
		name, ok := strings.CutSuffix(key, "_rps")
		if !ok || key == "misses_rps" {
			continue
		}
		var f *LoopFigure
		if err := json.Unmarshal(raw, &f); err != nil {
			return fmt.Errorf("loop.%s: %w", key, err)
		}
		if f != nil {
			if l.Counts == nil {
				l.Counts = map[string]*LoopFigure{}
			}
			l.Counts[name] = f
		}
	}
	return nil
}

// spliced is v's JSON with the members kv ("name":value each) put just
// before its last fields, which encode as tail: where a subject's own
// counters stand among the fields the engine names.
func spliced(v, tail any, kv [][]byte) ([]byte, error) {
	whole, err := plainJSON(v)
	if err != nil || len(kv) == 0 {
		return whole, err
	}
	t, err := plainJSON(tail)
	if err != nil {
		return nil, err
	}
	rest := t[1:] // `}`, or the tail's fields and `}`
	if !bytes.HasSuffix(whole, rest) {
		return nil, fmt.Errorf("%T's JSON does not end with its tail's %s", v, rest)
	}
	head := whole[:len(whole)-len(rest)] // `{`, `{...,` or `{...` (no tail fields)
	var b bytes.Buffer
	b.Write(head)
	if last := head[len(head)-1]; last != '{' && last != ',' {
		b.WriteByte(',')
	}
	b.Write(bytes.Join(kv, []byte(",")))
	if len(rest) > 1 {
		b.WriteByte(',')
	}
	b.Write(rest)
	return b.Bytes(), nil
}

// plainJSON is v's JSON as encoding/json writes it, HTML left as it is:
// the encoder that calls a MarshalJSON escapes it or not, as it was told.
func plainJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
