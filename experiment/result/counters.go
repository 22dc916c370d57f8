package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// Counters are a subject's own counters, summed over its servers (api.*
// in the results: the testbed's replicas' herdbench_api_* series), in the
// order its kind declares them. The engine holds their values and adds
// them up; it never names one: a kind declares its names once
// (DeclareCounters), and its subject reads them (plan.Subject.Counters).
type Counters []Counter

// Counter is one of a subject's counters.
type Counter struct {
	Name  string
	Value int64
}

var declared struct {
	sync.Mutex
	names []string
	rows  []ContractRow
}

// DeclareCounters makes names the counters a subject kind's results may
// hold, in their order, for gates and the results' schema, and rows the
// results contract's rows that say where they come from: a kind calls it
// once, as it registers (testbed/subject's init).
func DeclareCounters(rows []ContractRow, names ...string) {
	declared.Lock()
	defer declared.Unlock()
	declared.rows = append(declared.rows, rows...)
	for _, n := range names {
		if !slices.Contains(declared.names, n) {
			declared.names = append(declared.names, n)
		}
	}
}

// DeclaredCounters are the names every kind declared, in order.
func DeclaredCounters() []string {
	declared.Lock()
	defer declared.Unlock()
	return slices.Clone(declared.names)
}

// Value is the counter named name's value; 0 when c has none.
func (c Counters) Value(name string) int64 {
	for _, x := range c {
		if x.Name == name {
			return x.Value
		}
	}
	return 0
}

// Since is what was counted up to t, plus how much each counter grew from
// t to c, a counter that went down read as reset (its server restarted)
// and counted from zero, as Prometheus' rate() reads it.
func (c Counters) Since(t Counters) Counters {
	out := slices.Clone(c)
	for i, x := range out {
		if p := t.Value(x.Name); x.Value < p {
			out[i].Value = x.Value + p // reset: t's count plus what it counted since
		}
	}
	return out
}

// MarshalJSON writes c as an object, its counters in their order; nil as
// null.
func (c Counters) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(x.Name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s:%d", k, x.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object of counts in the order it holds them.
func (c *Counters) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*c = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("counters: want an object of counts, got %s", b)
	}
	out := Counters{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v int64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("counters: %v: %w", t, err)
		}
		out = append(out, Counter{Name: t.(string), Value: v})
	}
	*c = out
	return nil
}
