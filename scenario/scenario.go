// Package scenario reads scenario files: YAML that says everything the
// stampede's flags can say (target, load, trigger and its options, the
// replicas' knobs, arms with their own knobs and client policies, the
// timeline, gates, stop conditions and outputs), so an experiment can be
// kept, reviewed and rerun.
//
// Decoding is strict and reports every problem at once, each with its
// file:line and the accepted values: unknown keys, values of the wrong
// type, malformed durations. Every field maps to the flag that says the
// same thing (its `flag` tag); Settings lists what a file sets, in flag
// terms, so the command line applies a file with the same parsers as its
// flags, and flags given too override the file.
package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/strictyaml"
	"github.com/herdbench/herdbench/triggers"
)

// File is a scenario file. Every field is optional: what a file leaves out
// keeps its flag's default.
type File struct {
	Target      *string  `yaml:"target,omitempty" flag:"target" jsonschema:"description=What is attacked: testbed (the default)\\, a target file (docs/targets.md) or a base URL"`
	AllowHosts  []string `yaml:"allow_hosts,omitempty" flag:"allow-host" jsonschema:"description=Hosts besides loopback the target may touch"`
	Testbed     Testbed  `yaml:"testbed,omitempty" jsonschema:"description=The testbed the stampede starts when none runs"`
	Load        Load     `yaml:"load,omitempty" jsonschema:"description=The steady open-model load and its clients"`
	Trigger     Trigger  `yaml:"trigger,omitempty" jsonschema:"description=What provokes the herd at T\\, and its options"`
	Knobs       Knobs    `yaml:"knobs,omitempty" jsonschema:"description=Every arm's replica config; an arm's own knobs override them"`
	Arms        []Arm    `yaml:"arms,omitempty" jsonschema:"description=The configurations compared\\, one after another"`
	Timeline    Timeline `yaml:"timeline,omitempty" jsonschema:"description=Each arm's load: warmup\\, then before (the baseline)\\, T\\, after"`
	Escape      *string  `yaml:"escape,omitempty" flag:"escape" jsonschema:"description=Once an arm is metastable\\, step its rate down until the service comes back: on\\, on:LIMIT\\, SHARES or SHARES:LIMIT such as 60%\\,30%:15s\\, or off"`
	Repeat      *int     `yaml:"repeat,omitempty" flag:"repeat" jsonschema:"description=Runs of each arm\\, interleaved; reports show each figure's median with its min-max,minimum=1,maximum=20"`
	Seed        *uint64  `yaml:"seed,omitempty" flag:"seed" jsonschema:"description=Seeds the key draws and every random source (0: pick one and print it)"`
	Gates       []string `yaml:"gates,omitempty" flag:"gate" jsonschema:"description=Pass/fail rules on every arm's results: [ARM:]PATH OP VALUE\\, or [ARM:]PATH OP VALUE for SHARE of seconds"`
	AbortOn     []string `yaml:"abort_on,omitempty" flag:"abort-on" jsonschema:"description=Stop an arm while it runs when a live condition holds: PATH OP VALUE"`
	Outputs     []string `yaml:"outputs,omitempty" flag:"output" jsonschema:"description=Reports: FORMAT to stdout or FORMAT=FILE; formats table\\, json\\, markdown\\, html\\, junit"`
	ResultsDir  *string  `yaml:"results_dir,omitempty" flag:"results-dir" jsonschema:"description=Where every run's results.json is written"`
	MetricsAddr *string  `yaml:"metrics_addr,omitempty" flag:"metrics-addr" jsonschema:"description=Serve live Prometheus metrics at HOST:PORT on loopback while the run goes"`

	doc *strictyaml.Doc // where each key is, once parsed
}

// Testbed is the testbed a run starts when none is running, as testbed
// up's flags of the same names say.
type Testbed struct {
	Replicas     *int      `yaml:"replicas,omitempty" flag:"replicas" jsonschema:"minimum=1,maximum=64"`
	StateDir     *string   `yaml:"state_dir,omitempty" flag:"state-dir"`
	Provider     *string   `yaml:"provider,omitempty" flag:"provider" jsonschema:"description=Which provider runs it: auto\\, local or docker"`
	Items        *int      `yaml:"items,omitempty" flag:"items" jsonschema:"description=Items seeded into the database (at least load.keys),minimum=1"`
	Tiers        *int      `yaml:"tiers,omitempty" flag:"tiers" jsonschema:"description=1: the API replicas; 2: edge replicas in front of them,minimum=1,maximum=2"`
	ComposeFile  *string   `yaml:"compose_file,omitempty" flag:"compose-file" jsonschema:"description=The docker provider's compose file"`
	DBPool       *int      `yaml:"db_pool,omitempty" flag:"db-pool" jsonschema:"description=Database connections per replica (Postgres or MariaDB),minimum=1,maximum=1000"`
	RedisPool    *int      `yaml:"redis_pool,omitempty" flag:"redis-pool" jsonschema:"description=Redis connections per replica,minimum=1,maximum=10000"`
	DBTimeout    *Duration `yaml:"db_timeout,omitempty" flag:"db-timeout" jsonschema:"description=Bound on one item query\\, pool wait included"`
	RedisTimeout *Duration `yaml:"redis_timeout,omitempty" flag:"redis-timeout" jsonschema:"description=Dial\\, read and write timeout of Redis commands"`
	Cache        *string   `yaml:"cache,omitempty" flag:"cache" jsonschema:"description=The replicas' item cache: redis or memcached,enum=redis,enum=memcached"`
	DB           *string   `yaml:"db,omitempty" flag:"db" jsonschema:"description=The replicas' database: postgres or mariadb,enum=postgres,enum=mariadb"`
}

// Load is the steady open-model load and what its clients do.
type Load struct {
	Rate          *int      `yaml:"rate,omitempty" flag:"rate" jsonschema:"description=Requests per second\\, open model,minimum=1"`
	Keys          *int      `yaml:"keys,omitempty" flag:"keys" jsonschema:"description=Key space: item ids 1..keys,minimum=1"`
	HotKeys       *int      `yaml:"hot_keys,omitempty" flag:"hot-keys" jsonschema:"description=The hottest ids\\, warmed before each arm and hit by the trigger,minimum=1"`
	Zipf          *float64  `yaml:"zipf,omitempty" flag:"zipf" jsonschema:"description=Zipf exponent of the key distribution\\, greater than 1"`
	Timeout       *Duration `yaml:"timeout,omitempty" flag:"timeout" jsonschema:"description=Client timeout per attempt"`
	Clients       *int      `yaml:"clients,omitempty" flag:"clients" jsonschema:"description=Virtual clients\\, each with its own retry state,minimum=1,maximum=100000"`
	Retry         *string   `yaml:"retry,omitempty" flag:"retry" jsonschema:"description=Retry policy: none\\, immediate:N\\, fixed:D:N\\, exp|full-jitter|equal-jitter|decorrelated:BASE:CAP:N"`
	RetryBudget   *string   `yaml:"retry_budget,omitempty" flag:"retry-budget" jsonschema:"description=none\\, a ratio such as 10%\\, tokens or tokens:N"`
	Throttle      *float64  `yaml:"throttle,omitempty" flag:"throttle" jsonschema:"description=Adaptive throttling's K (0: off)"`
	Hedge         *string   `yaml:"hedge,omitempty" flag:"hedge" jsonschema:"description=none\\, DELAY or DELAY:RATE such as 50ms:10%"`
	ClientBreaker *string   `yaml:"client_breaker,omitempty" flag:"client-breaker" jsonschema:"description=none\\, or FAILURES:OPEN such as 5:2s"`
	Critical      *float64  `yaml:"critical,omitempty" flag:"critical" jsonschema:"description=Share of requests marked X-Priority: critical,minimum=0,maximum=1"`
}

// Trigger is what provokes the herd at T, and the triggers' options. The
// options' keys are the registry's (herdbench triggers; the flag of the
// same name with underscores), so a trigger that is added is a key here
// too.
type Trigger struct {
	Name    *string           `yaml:"name,omitempty" flag:"trigger"`
	Options map[string]string `yaml:",inline"`
}

// Timeline is one arm's load: warmup, before (the baseline), T, after.
type Timeline struct {
	Warmup *Duration `yaml:"warmup,omitempty" flag:"warmup"`
	Before *Duration `yaml:"before,omitempty" flag:"before"`
	After  *After    `yaml:"after,omitempty" flag:"after"`
}

// Knobs are the replicas' run-time config (docs/testbed.md): every knob
// the Vocabulary names, the flag of the same name with underscores. The
// strategy is the arms'. A knob the replicas gain is a key here too.
type Knobs struct {
	Values map[string]string `yaml:",inline"`
}

// Arm is one arm: a name as --arms takes it (a strategy such as
// "lock+ttl_jitter", or a client arm such as "retry=exp:100ms:1s:3"), or a
// mapping that names the arm and sets its strategy, knobs and client
// policies itself.
type Arm struct {
	Name          string   `yaml:"name" jsonschema:"description=The arm's name in reports; without strategy\\, read as --arms reads it"`
	Strategy      *string  `yaml:"strategy,omitempty" jsonschema:"description=The replicas' strategy\\, such as lock or lock+ttl_jitter"`
	Knobs         Knobs    `yaml:"knobs,omitempty" jsonschema:"description=This arm's own knobs\\, over the file's"`
	Retry         *string  `yaml:"retry,omitempty" flag:"retry"`
	RetryBudget   *string  `yaml:"retry_budget,omitempty" flag:"retry-budget"`
	Throttle      *float64 `yaml:"throttle,omitempty" flag:"throttle"`
	Hedge         *string  `yaml:"hedge,omitempty" flag:"hedge"`
	ClientBreaker *string  `yaml:"client_breaker,omitempty" flag:"client-breaker"`
	Edge          Edge     `yaml:"edge,omitempty" jsonschema:"description=The edge replicas' policy in this arm (a testbed up --tiers 2); keys left out keep testbed up's"`
	Line          int      `yaml:"-"` // where the arm starts in its file
	path          string   // arms[N], N its place in the file: an arm that does not decode is not in File.Arms
}

// Edge is an arm's policy for the edge replicas of a two-tier testbed,
// each key in the forms of testbed edge's flag of the same name.
type Edge struct {
	Timeout     *Duration `yaml:"timeout,omitempty" flag:"edge-timeout" jsonschema:"description=Each attempt's own timeout"`
	Retry       *string   `yaml:"retry,omitempty" flag:"edge-retry" jsonschema:"description=Retry policy on the calls to the replicas: none\\, immediate:N\\, fixed:D:N\\, exp|full-jitter|equal-jitter|decorrelated:BASE:CAP:N"`
	RetryBudget *string   `yaml:"retry_budget,omitempty" flag:"edge-retry-budget" jsonschema:"description=none\\, a ratio such as 10%\\, tokens or tokens:N"`
	Breaker     *string   `yaml:"breaker,omitempty" flag:"edge-breaker" jsonschema:"description=Circuit breaker on the calls to the replicas: none\\, or FAILURES:OPEN such as 5:2s"`
	Bulkhead    *int      `yaml:"bulkhead,omitempty" flag:"edge-bulkhead" jsonschema:"description=Requests calling the replicas at once at most (0: unbounded),minimum=0"`
	Deadline    *Duration `yaml:"deadline,omitempty" flag:"edge-deadline" jsonschema:"description=Each request's whole time\\, passed on to the replicas (0: none)"`
}

// Duration is a Go duration string such as "500ms" or "2s", checked where
// it is applied.
type Duration string

// After is a Duration, or auto or auto:MAX: the load after T goes on until
// the arm has recovered and held, or MAX has passed (--after).
type After string

// Setting is one value a file sets, in flag terms.
type Setting struct {
	Flag   string   // the flag that says the same
	Values []string // one for a scalar; a list field gives each element
	Path   string   // where in the file: load.rate, gates
	Line   int
	Lines  []int // of a list, each element's line
}

// Where is Path with its file and line, for errors: "s.yaml:7: load.rate".
func (s Setting) Where(file string) string { return fmt.Sprintf("%s:%d: %s", file, s.Line, s.Path) }

// Vocabulary is what a scenario file may name besides its own keys: the
// triggers and their options (nil: triggers.Default()), and the knobs of
// what the arms run on (the testbed's: testbed/subject.Knobs).
type Vocabulary struct {
	Triggers *triggers.Registry
	Knobs    []Knob
}

// Knob is one knob a scenario may set: its JSON name, its flag's type
// (duration, int, uint32, float64, bool, string), its accepted values when
// they are a closed set, and its help line.
type Knob struct {
	Name, Type string
	Enum       []string
	Help       string
}

func (v Vocabulary) registry() *triggers.Registry {
	if v.Triggers == nil {
		return triggers.Default()
	}
	return v.Triggers
}

func (v Vocabulary) knobNames() []string {
	names := make([]string, len(v.Knobs))
	for i, k := range v.Knobs {
		names[i] = k.Name
	}
	return names
}

// Read reads a scenario file in v. The returned error lists every problem
// the file has. A file whose values do not all decode (YAML, a type, a
// key twice) is nil, with those problems alone; else it is returned too.
func Read(path string, v Vocabulary) (*File, error) {
	b, err := herd.ReadFile(path, "a scenario file, such as examples/stampede.yaml")
	if err != nil {
		return nil, err
	}
	return Parse(b, path, v)
}

// Parse decodes a scenario from b; name is the file's name in errors.
func Parse(b []byte, name string, v Vocabulary) (*File, error) {
	reg := v.registry()
	f := &File{}
	doc, err := strictyaml.Decode(b, name, "scenario", f)
	if doc == nil {
		return nil, err
	}
	f.doc = doc
	for i := range f.Arms {
		a := &f.Arms[i]
		a.path = fmt.Sprintf("arms[%d]", i)
		for j := i; doc.Line(fmt.Sprintf("arms[%d]", j)) > 0; j++ {
			if doc.Line(fmt.Sprintf("arms[%d]", j)) == a.Line {
				a.path = fmt.Sprintf("arms[%d]", j)
				break
			}
		}
		a.Line = doc.Line(a.path)
	}
	accepted := []string{"name"}
	for _, o := range reg.Options() {
		accepted = append(accepted, o.Key)
	}
	problems := herd.Fields(err)
	problems = append(problems, f.unknownKeys(f.Trigger.Options, "trigger", accepted)...)
	problems = append(problems, f.unknownKeys(f.Knobs.Values, "knobs", v.knobNames())...)
	for i := range f.Arms {
		problems = append(problems, f.unknownKeys(f.Arms[i].Knobs.Values, f.Arms[i].path+".knobs", v.knobNames())...)
	}
	if doc.Failed() { // what did not decode is not checked further: it would blame other fields
		return nil, problems.ByLine().Err()
	}
	if len(f.Arms) == 0 && doc.Line("arms") > 0 { // arms: [] would run the default arms
		problems = append(problems, &herd.FieldError{File: name, Line: doc.Line("arms"), Field: "arms",
			Msg: "empty (accepted: one arm or more, such as [none, lock]; or no arms: key, for the default arms none, singleflight, lock, xfetch)"})
	}
	// an empty list that means what leaving it out means reads as a choice
	for _, l := range []struct {
		key, such, without string
		n                  int
	}{{"outputs", "[table, json=results.json]", "the table on stdout", len(f.Outputs)},
		{"gates", "[\"db.queries <= 100\"]", "no gates", len(f.Gates)},
		{"abort_on", "[\"http.drop_rate > 50%\"]", "no stop conditions", len(f.AbortOn)}} {
		if l.n == 0 && doc.Line(l.key) > 0 {
			problems = append(problems, &herd.FieldError{File: name, Line: doc.Line(l.key), Field: l.key,
				Msg: fmt.Sprintf("empty (accepted: one or more, such as %s; or no %s: key, for %s)", l.such, l.key, l.without)})
		}
	}
	return f, problems.ByLine().Err()
}

// unknownKeys reports and drops the keys of an inline map at path that
// are not accepted.
func (f *File) unknownKeys(m map[string]string, path string, accepted []string) herd.FieldErrors {
	accepted = slices.Sorted(slices.Values(accepted))
	var problems herd.FieldErrors
	for k := range m {
		if !slices.Contains(accepted, k) {
			p := strictyaml.Join(path, k)
			problems = append(problems, &herd.FieldError{File: f.doc.Name, Line: f.doc.Line(p), Field: p,
				Msg: fmt.Sprintf("unknown key %q (accepted: %s)", k, strings.Join(accepted, ", "))})
			delete(m, k)
		}
	}
	return problems
}

// Settings lists what the file sets outside its arms, in flag terms,
// in the order of the file's fields.
func (f *File) Settings() []Setting {
	return settings(reflect.ValueOf(*f), "", f.doc)
}

// Settings lists the knobs and client policies an arm sets, in flag terms.
// Path is where the arm is in its file: arms[N].
func (a Arm) Path() string { return a.path }

func (a Arm) Settings(f *File) []Setting {
	return settings(reflect.ValueOf(a), a.path, f.doc)
}

func settings(v reflect.Value, path string, doc *strictyaml.Doc) []Setting {
	var out []Setting
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		p := strictyaml.Join(path, name)
		fv := v.Field(i)
		flag := sf.Tag.Get("flag")
		switch {
		case sf.Type.Kind() == reflect.Map && strings.HasSuffix(sf.Tag.Get("yaml"), ",inline"):
			out = append(out, inlineSettings(fv.Interface().(map[string]string), path, doc)...)
		case sf.Type.Kind() == reflect.Struct:
			out = append(out, settings(fv, p, doc)...)
		case flag == "":
		case sf.Type.Kind() == reflect.Slice:
			if fv.Len() > 0 && !doc.Bad(p) {
				vals := make([]string, fv.Len())
				at := make([]int, fv.Len())
				for j := range vals {
					vals[j] = fmt.Sprint(fv.Index(j).Interface())
					at[j] = doc.Line(fmt.Sprintf("%s[%d]", p, j))
				}
				out = append(out, Setting{Flag: flag, Values: vals, Path: p, Line: doc.Line(p), Lines: at})
			}
		case !fv.IsNil() && !doc.Bad(p):
			out = append(out, Setting{Flag: flag, Values: []string{fmt.Sprint(fv.Elem().Interface())}, Path: p, Line: doc.Line(p)})
		}
	}
	return out
}

// inlineSettings lists the keys of an inline map, in file order: each the
// flag of the same name with dashes.
func inlineSettings(m map[string]string, path string, doc *strictyaml.Doc) []Setting {
	var out []Setting
	for k, v := range m {
		p := strictyaml.Join(path, k)
		if !doc.Bad(p) {
			out = append(out, Setting{Flag: strings.ReplaceAll(k, "_", "-"), Values: []string{v}, Path: p, Line: doc.Line(p)})
		}
	}
	slices.SortFunc(out, func(a, b Setting) int { return a.Line - b.Line })
	return out
}

// UnmarshalYAML reads an arm from a name or a mapping; the mapping's keys
// are checked by unknownKeys.
func (a *Arm) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		a.Name, a.Line = n.Value, n.Line
		return nil
	}
	type plain Arm
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if p.Name == "" {
		return strictyaml.Problem(n, "an arm needs a name (accepted: a name such as lock, or a mapping with name and optionally strategy, knobs, retry, throttle, hedge, client_breaker, edge)")
	}
	*a = Arm(p)
	a.Line = n.Line
	return nil
}

// Line is where path (such as "load.rate") is in the file, 0 if absent.
func (f *File) Line(path string) int { return f.doc.Line(path) }
