package experiment

import (
	"bytes"
	"encoding"
	"encoding/json"
	"flag"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/triggers"
)

var update = flag.Bool("update", false, "rewrite testdata/aggregate/* and the results contract's table in docs/stampede.md")

// repeatedFixture is the reporters' real repeated run: three runs of the
// arms none, singleflight and lock.
const repeatedFixture = "../reporters/testdata/repeated.json"

// Aggregate's output on every repeated fixture is pinned in
// testdata/aggregate/NAME.json (written by the JSON walk repeats took
// before the typed figures, and kept byte for byte since): the real runs
// of reporters/testdata/repeated.json, each synthetic fixture of the
// repeat tests, and runs with every figure of an arm filled, some missing.
// Aggregate leaves its runs as they were.
func TestAggregateGolden(t *testing.T) {
	for name, runs := range aggregateFixtures(t) {
		t.Run(name, func(t *testing.T) {
			before, _ := json.Marshal(runs)
			got, err := result.Aggregate(runs)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := json.Marshal(runs); !bytes.Equal(before, after) {
				t.Errorf("Aggregate changed its runs:\n%s\nwant\n%s", after, before)
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "aggregate", name+".json")
			if *update {
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(b, '\n'), want) {
				t.Errorf("Aggregate(%s) differs from %s:\n%s", name, path, b)
			}
		})
	}
}

// aggregateFixtures are the repeated runs Aggregate is pinned on, by name.
func aggregateFixtures(t *testing.T) map[string][]result.ArmResult {
	t.Helper()
	out := map[string][]result.ArmResult{}
	b, err := os.ReadFile(repeatedFixture)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Arms {
		runs := a.Runs
		for i := range runs {
			runs[i].Representative = false
		}
		out["repeated-"+a.Name] = runs
	}
	out["synth-odd"] = []result.ArmResult{synthRun(430, 30, at(900), result.Recovered), synthRun(398, 10, at(500), result.Recovered), synthRun(412, 20, at(700), result.Recovered)}
	out["synth-even"] = []result.ArmResult{synthRun(400, 10, at(500), result.Recovered), synthRun(405, 15, at(600), result.Recovered)}
	out["synth-missing"] = []result.ArmResult{synthRun(400, 10, nil, result.Metastable), synthRun(405, 15, at(600), result.Recovered), synthRun(410, 20, nil, result.Metastable)}
	out["synth-one"] = []result.ArmResult{synthRun(400, 10, at(5), result.Recovered), synthRun(400, 10, at(5), result.Recovered)}[:1]
	escape := func(rps *float64) result.ArmResult {
		r := synthRun(100, 1, nil, result.Metastable)
		r.Escape = &result.EscapeResult{FromRPS: 20, StartMS: at(7000), RPS: rps, Steps: []result.EscapeStep{}}
		if rps != nil {
			r.Escape.Share = num(*rps / 20)
		}
		return r
	}
	out["escape"] = []result.ArmResult{escape(nil), escape(num(10)), escape(num(5))}
	out["escape-none"] = []result.ArmResult{escape(num(5)), escape(nil), escape(nil)}
	loop := func(attempts, errs float64, verdict, held string) result.ArmResult {
		r := synthRun(100, 5, nil, verdict)
		r.Loop = &result.Loop{AttemptsPerRequest: &result.LoopFigure{Before: 1, After: attempts, Ratio: attempts},
			Counts: map[string]*result.LoopFigure{"load_errors": {Before: 0, After: errs, Ratio: errs}}, HeldBy: held}
		return r
	}
	out["loop"] = []result.ArmResult{loop(5, 2, result.Metastable, "attempts x5"), loop(4.8, 10, result.Metastable, "load errors x10"), loop(1, 1, result.Recovered, "")}
	class := func(requests int64, verdict string) result.ArmResult {
		return result.ArmResult{Name: "none", Verdict: result.Recovered, Requests: map[string]*result.RequestFigures{"checkout": {Requests: requests, Verdict: verdict}}}
	}
	out["classes"] = []result.ArmResult{class(100, result.Metastable), class(300, result.Recovered), class(200, result.Metastable)}
	out["filled-expire"] = filledRuns(4, &triggers.ExpireDetail{}, "expire")
	out["filled-command"] = filledRuns(3, &triggers.CommandDetail{}, "command")
	out["filled-writes"] = filledRuns(3, &triggers.WritesDetail{}, "writes")
	unknown := filledRuns(3, nil, "drizzle")
	for i := range unknown { // a trigger triggers.Default does not know, read back: its detail as JSON values
		unknown[i].Trigger.Detail = map[string]any{"drops": float64(10 + i*7), "word": "w", "nested": map[string]any{"n": float64(i)}}
	}
	out["filled-unknown"] = unknown
	sparse := filledRuns(3, &triggers.ExpireDetail{}, "expire")
	sparse[2].SettleMS, sparse[2].Depth = at(40), num(0.5)
	for _, i := range []int{1} { // what the representative lacks stays as it has it; a null it has is set
		sparse[i].SettleMS, sparse[i].Depth, sparse[i].RecoveryMS, sparse[i].Loop, sparse[i].Timing.AfterMS = nil, nil, nil, nil, nil
		sparse[i].Trigger.Detail.(*triggers.ExpireDetail).Memcached.ExpiresAt = 0
	}
	sparse[0].Escape.Share, sparse[2].Escape = nil, nil
	out["filled-sparse"] = sparse
	return out
}

// filledRuns are n runs of an arm with every figure set, each run's own,
// and figures missing in some: a run without db, one whose recovery and
// escape were not found, one without a settle time, depth or class.
func filledRuns(n int, detail any, trigger string) []result.ArmResult {
	runs := make([]result.ArmResult, n)
	for i := range runs {
		r := &runs[i]
		fill(reflect.ValueOf(r).Elem(), "", i)
		r.Name, r.Verdict = "filled", []string{result.Recovered, result.Metastable, result.Recovered, result.Overloaded}[i%4]
		r.Config = json.RawMessage(`{"strategy":"lock","ttl":"1m0s","ttl_jitter":0.2,"rate_limit":` + string(rune('5'+i)) + `0,"nested":{"depth":` + string(rune('1'+i)) + `}}`)
		r.Trigger.Name, r.Trigger.Detail = trigger, nil
		if detail != nil {
			d := reflect.New(reflect.TypeOf(detail).Elem())
			fill(d.Elem(), "trigger.detail", i)
			r.Trigger.Detail = d.Interface()
		}
		r.Runs, r.Spread, r.Representative = nil, nil, false
		r.Loop.HeldBy = ""
	}
	runs[0].DB = nil
	runs[1].RecoveryMS, runs[1].Escape.RPS, runs[1].Escape.Share = nil, nil, nil
	runs[2%n].SettleMS, runs[2%n].Depth = nil, nil
	delete(runs[n-1].Requests, "b")
	runs[n-1].LB.Servers["c"] = &result.LBServer{Attempts: 3, Status: "UP"}
	return runs
}

// fieldName is a counter's name as a Go field's: load_errors LoadErrors,
// db_new_conns DBNewConns.
func fieldName(n string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(n, "_") {
		if w == "db" {
			b.WriteString("DB")
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// fill sets every number under v from its path and i, every pointer, and
// two keys of every map of string keys; slices get one element.
func fill(v reflect.Value, path string, i int) {
	h := fnv.New32a()
	h.Write([]byte(path))
	seed := int64(h.Sum32()%997) + int64(i)*37
	if v.Type() == reflect.TypeFor[result.Counters]() {
		// a subject's counters, as its kind declared them, each seeded
		// from the name the results' field had when they were a struct
		var c result.Counters
		for _, n := range result.DeclaredCounters() {
			var x int64
			fill(reflect.ValueOf(&x).Elem(), path+"."+fieldName(n), i)
			c = append(c, result.Counter{Name: n, Value: x})
		}
		v.Set(reflect.ValueOf(c))
		return
	}
	if t := v.Type(); t != reflect.TypeOf(time.Time{}) && t != reflect.TypeOf(&time.Time{}) &&
		(t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)) {
		return // a policy or a word of its own: left as it is
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type() == reflect.TypeOf(&time.Time{}) {
			v.Set(reflect.ValueOf(ptrTo(time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC))))
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path, i)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC)))
			return
		}
		for k := range v.NumField() {
			if f := v.Type().Field(k); f.Name == "Counts" && f.Type.Key().Kind() == reflect.String {
				fillRowCounters(v.Field(k), path, i)
			} else if f.IsExported() && f.Type != reflect.TypeOf([]result.ArmResult{}) {
				fill(v.Field(k), path+"."+f.Name, i)
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for _, k := range []string{"a", "b"} {
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, path+"."+k, i)
			v.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // raw JSON: set by the caller
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), path+".0", i)
		v.Set(s)
	case reflect.String:
		v.SetString("w")
	case reflect.Bool:
		v.SetBool(i%2 == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(seed % 120)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(seed % 120))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seed%1000) / 7)
	}
}

// fillRowCounters fills a row's or a loop's subject counters (Counts), as
// their kind declared them, each seeded from the name its field had when
// they were fields: path.Loads for a row's loads, path.LoadsRPS for a
// loop's.
func fillRowCounters(v reflect.Value, path string, i int) {
	suffix := ""
	if v.Type().Elem().Kind() == reflect.Pointer {
		suffix = "RPS"
	}
	v.Set(reflect.MakeMap(v.Type()))
	for _, c := range result.DeclaredRowCounters() {
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, path+"."+fieldName(c.Name)+suffix, i)
		v.SetMapIndex(reflect.ValueOf(c.Name), e)
	}
}

var marshaler = reflect.TypeFor[encoding.TextMarshaler]()

func ptrTo[T any](v T) *T { return &v }
