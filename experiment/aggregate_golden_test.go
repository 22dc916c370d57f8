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
	"testing"
	"time"

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
			got, err := Aggregate(runs)
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
func aggregateFixtures(t *testing.T) map[string][]ArmResult {
	t.Helper()
	out := map[string][]ArmResult{}
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
	out["synth-odd"] = []ArmResult{synthRun(430, 30, at(900), Recovered), synthRun(398, 10, at(500), Recovered), synthRun(412, 20, at(700), Recovered)}
	out["synth-even"] = []ArmResult{synthRun(400, 10, at(500), Recovered), synthRun(405, 15, at(600), Recovered)}
	out["synth-missing"] = []ArmResult{synthRun(400, 10, nil, Metastable), synthRun(405, 15, at(600), Recovered), synthRun(410, 20, nil, Metastable)}
	out["synth-one"] = []ArmResult{synthRun(400, 10, at(5), Recovered), synthRun(400, 10, at(5), Recovered)}[:1]
	escape := func(rps *float64) ArmResult {
		r := synthRun(100, 1, nil, Metastable)
		r.Escape = &EscapeResult{FromRPS: 20, StartMS: at(7000), RPS: rps, Steps: []EscapeStep{}}
		if rps != nil {
			r.Escape.Share = num(*rps / 20)
		}
		return r
	}
	out["escape"] = []ArmResult{escape(nil), escape(num(10)), escape(num(5))}
	out["escape-none"] = []ArmResult{escape(num(5)), escape(nil), escape(nil)}
	loop := func(attempts, errs float64, verdict, held string) ArmResult {
		r := synthRun(100, 5, nil, verdict)
		r.Loop = &Loop{AttemptsPerRequest: &LoopFigure{Before: 1, After: attempts, Ratio: attempts},
			LoadErrorsRPS: &LoopFigure{Before: 0, After: errs, Ratio: errs}, HeldBy: held}
		return r
	}
	out["loop"] = []ArmResult{loop(5, 2, Metastable, "attempts x5"), loop(4.8, 10, Metastable, "load errors x10"), loop(1, 1, Recovered, "")}
	class := func(requests int64, verdict string) ArmResult {
		return ArmResult{Name: "none", Verdict: Recovered, Requests: map[string]*RequestFigures{"checkout": {Requests: requests, Verdict: verdict}}}
	}
	out["classes"] = []ArmResult{class(100, Metastable), class(300, Recovered), class(200, Metastable)}
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
func filledRuns(n int, detail any, trigger string) []ArmResult {
	runs := make([]ArmResult, n)
	for i := range runs {
		r := &runs[i]
		fill(reflect.ValueOf(r).Elem(), "", i)
		r.Name, r.Verdict = "filled", []string{Recovered, Metastable, Recovered, Overloaded}[i%4]
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
	runs[n-1].LB.Servers["c"] = &LBServer{Attempts: 3, Status: "UP"}
	return runs
}

// fill sets every number under v from its path and i, every pointer, and
// two keys of every map of string keys; slices get one element.
func fill(v reflect.Value, path string, i int) {
	h := fnv.New32a()
	h.Write([]byte(path))
	seed := int64(h.Sum32()%997) + int64(i)*37
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
			if f := v.Type().Field(k); f.IsExported() && f.Type != reflect.TypeOf([]ArmResult{}) {
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

var marshaler = reflect.TypeFor[encoding.TextMarshaler]()

func ptrTo[T any](v T) *T { return &v }
