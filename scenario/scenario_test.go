package scenario

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/replica"
)

var update = flag.Bool("update", false, "rewrite the committed JSON Schema from the Go types")

const good = `# the default stampede, shorter
load:
  rate: 500
  hot_keys: 50
  timeout: 2s
  retry: exp:100ms:1s:3
trigger:
  name: outage
  outage: 1s
knobs:
  query_cost: 20ms
arms:
  - none
  - name: short-lock
    strategy: lock
    knobs: {lock_ttl: 1s}
    retry: none
timeline: {warmup: 1s, before: 2s, after: 3s}
gates:
  - "db.queries < 100"
  - "short-lock:http.drop_rate < 1%"
`

func TestParseAndSettings(t *testing.T) {
	f, err := Parse([]byte(good), "s.yaml", testbed)
	if err != nil {
		t.Fatalf("Parse = %v; want nil", err)
	}
	got := map[string]Setting{}
	for _, s := range f.Settings() {
		got[s.Flag] = s
	}
	want := []Setting{
		{Flag: "rate", Values: []string{"500"}, Path: "load.rate", Line: 3},
		{Flag: "hot-keys", Values: []string{"50"}, Path: "load.hot_keys", Line: 4},
		{Flag: "timeout", Values: []string{"2s"}, Path: "load.timeout", Line: 5},
		{Flag: "retry", Values: []string{"exp:100ms:1s:3"}, Path: "load.retry", Line: 6},
		{Flag: "trigger", Values: []string{"outage"}, Path: "trigger.name", Line: 8},
		{Flag: "outage", Values: []string{"1s"}, Path: "trigger.outage", Line: 9},
		{Flag: "query-cost", Values: []string{"20ms"}, Path: "knobs.query_cost", Line: 11},
		{Flag: "warmup", Values: []string{"1s"}, Path: "timeline.warmup", Line: 18},
		{Flag: "gate", Values: []string{"db.queries < 100", "short-lock:http.drop_rate < 1%"}, Path: "gates", Line: 19, Lines: []int{20, 21}},
	}
	for _, w := range want {
		if g := got[w.Flag]; !reflect.DeepEqual(g, w) {
			t.Errorf("setting %s = %+v; want %+v", w.Flag, g, w)
		}
	}
	if len(got) != len(want)+2 { // before and after too
		t.Errorf("%d settings; want %d: %+v", len(got), len(want)+2, got)
	}
	if len(f.Arms) != 2 || f.Arms[0].Name != "none" || f.Arms[1].Name != "short-lock" || *f.Arms[1].Strategy != "lock" {
		t.Fatalf("arms = %+v; want none and short-lock (lock)", f.Arms)
	}
	arm := f.Arms[1].Settings(f)
	wantArm := []Setting{
		{Flag: "lock-ttl", Values: []string{"1s"}, Path: "arms[1].knobs.lock_ttl", Line: 16},
		{Flag: "retry", Values: []string{"none"}, Path: "arms[1].retry", Line: 17},
	}
	if !reflect.DeepEqual(arm, wantArm) || f.Arms[1].Line != 14 {
		t.Errorf("arm settings = %+v at line %d; want %+v at line 14", arm, f.Arms[1].Line, wantArm)
	}
}

// An invalid file reports every problem at once, each with its line, the
// key and what is accepted.
func TestParseReportsEveryProblem(t *testing.T) {
	bad := `load:
  rate: fast
  bogus: 1
  keys: [1, 2]
trigger: {name: expire, colour: red}
arms:
  - none
  - {strategy: lock}
  - name: x
    knobs: {lock_tll: 1s}
`
	_, err := Parse([]byte(bad), "bad.yaml", testbed)
	if err == nil {
		t.Fatal("Parse of a file with six problems = nil")
	}
	for _, want := range []string{
		`bad.yaml:2: load.rate: the string ` + "`fast`" + ` where a whole number is expected (accepted: a whole number)`,
		`bad.yaml:3: load.bogus: unknown key "bogus" (accepted: client_breaker, clients,`,
		`bad.yaml:4: load.keys: a list where a whole number is expected`,
		`bad.yaml:5: trigger.colour: unknown key "colour" (accepted: burst, command_for, command_timeout, dependency, ended_when, name, outage, restart, rolling, run, slowdb_for, slowdb_latency, undo, undo_timeout, write_burst, write_fanout, write_keys, write_kill, write_rate, write_restart, write_restart_after, write_settle)`,
		`bad.yaml:8: an arm needs a name`,
		`bad.yaml:10: arms[2].knobs.lock_tll: unknown key "lock_tll" (accepted: abandoned_load, apply_rate, breaker_failures,`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse error:\n%v\nwant it to contain\n%s", err, want)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 6 {
		t.Errorf("Parse reported %d problems; want 6:\n%v", n, err)
	}
}

func TestParseRejectsWhatIsNotYAML(t *testing.T) {
	if _, err := Parse([]byte("load: [unclosed"), "x.yaml", testbed); err == nil || !strings.Contains(err.Error(), "x.yaml:") {
		t.Errorf("Parse of broken YAML = %v; want an error naming the file and line", err)
	}
	// an empty file, a null one, a key with no value and a second
	// document would each run the defaults, silently
	for in, want := range map[string]string{
		"":                                 "e.yaml:1: empty: no keys (accepted: a scenario's keys, docs/scenarios.md)",
		"# a comment\n":                    "e.yaml:1: empty: no keys",
		"~\n":                              "e.yaml:1: empty: no keys",
		"load: null\n":                     "e.yaml:1: load: no value (accepted: a mapping; or leave the key out, for its default)",
		"load:\n  rate: ~\n":               "e.yaml:2: load.rate: no value (accepted: a whole number; or leave the key out",
		"load:\n  rate: 1\n---\nseed: 2\n": "e.yaml:3: a second document at line 3: one scenario per file",
		"load:\n  zipf: 1e999\n":           "e.yaml:2: load.zipf: 1e999 is not a finite number (accepted: a number, such as 0.5)",
		"arms:\n  - name: j\n    strategy: ttl_jitter\n    knobs:\n      ttl_jitter: 0.1\n      ttl_jitter: 0.2\n": "e.yaml:6: arms[0].knobs.ttl_jitter: given twice, at lines 5 and 6 (accepted: each key once)",
	} {
		f, err := Parse([]byte(in), "e.yaml", testbed)
		if f != nil || err == nil || err.Error() != want && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, %v; want nil, %q alone", in, f, err, want)
		}
	}
}

// Every knob of the replicas is a key of a scenario's knobs, in the schema
// and in a file: both come from replica.Knobs.
func TestKnobsAreTheReplicasKnobs(t *testing.T) {
	b, err := Schema(testbed)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Knobs struct {
				Properties map[string]any `json:"properties"`
			} `json:"knobs"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	for _, name := range replica.KnobNames() {
		if _, ok := schema.Properties.Knobs.Properties[name]; !ok {
			t.Errorf("schema knobs lack %q", name)
		}
		f, err := Parse([]byte("knobs: {"+name+": x}\n"), "k.yaml", testbed)
		if err != nil || len(f.Settings()) != 1 || f.Settings()[0].Flag != strings.ReplaceAll(name, "_", "-") {
			t.Errorf("knobs.%s: %v; want one setting of its flag", name, err)
		}
	}
	if len(schema.Properties.Knobs.Properties) != len(replica.KnobNames()) {
		t.Errorf("schema knobs = %d keys; want the %d knobs", len(schema.Properties.Knobs.Properties), len(replica.KnobNames()))
	}
}

// The committed schema is the one the Go types generate.
func TestSchemaMatchesTheTypes(t *testing.T) {
	b, err := Schema(testbed)
	if err != nil {
		t.Fatal(err)
	}
	const path = "../docs/scenario.schema.json"
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./scenario -update to write it)", err)
	}
	if !bytes.Equal(b, committed) {
		t.Errorf("%s differs from the schema the Go types generate; run go test ./scenario -update", path)
	}
	for _, want := range []string{`"additionalProperties": false`, `"oneOf"`, `"hot_keys"`, `"shed_wait"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("schema has no %s", want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("arms: [none, {name: a, strategy: lock}]"))
	f.Add([]byte("load: {rate: -1, keys: x}"))
	f.Add([]byte("- just\n- a list"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b, "f.yaml", testbed)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("Parse error %q does not name the file", err)
			}
		}
		if file == nil {
			return
		}
		// whatever decoded lists as settings with a flag and a line
		for _, s := range file.Settings() {
			if s.Flag == "" || len(s.Values) == 0 || s.Path == "" {
				t.Fatalf("setting %+v lacks its flag, values or path", s)
			}
		}
		for _, a := range file.Arms {
			_ = a.Settings(file)
		}
	})
}

// testbed is the vocabulary of the bundled testbed: the default triggers
// and the replicas' knobs.
var testbed = func() Vocabulary {
	var v Vocabulary
	for _, k := range replica.DefaultMitigations().Knobs() {
		v.Knobs = append(v.Knobs, Knob{Name: k.Name, Type: k.Type(), Enum: k.Enum, Help: k.Help})
	}
	return v
}()
