package triggers

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// The options are the triggers' tagged fields: keys, help, types and the
// closed sets their types name.
func TestOptionsComeFromTheTags(t *testing.T) {
	reg := Default()
	var got []string
	for _, o := range reg.Options() {
		got = append(got, o.Trigger+"."+o.Key+":"+o.Type()+"="+o.String())
		if o.Help == "" || o.Flag() != strings.ReplaceAll(o.Key, "_", "-") {
			t.Errorf("option %s of %s: help %q, flag %q; want help and the key with dashes", o.Key, o.Trigger, o.Help, o.Flag())
		}
	}
	want := []string{"outage.outage:duration=2s", "outage.dependency:string=postgres", "slowdb.slowdb_latency:duration=300ms",
		"slowdb.slowdb_for:duration=3s", "burst.burst:int=1000", "restart.restart:string=api", "restart.rolling:bool=false",
		"writes.write_burst:int=500", "writes.write_keys:int=3",
		"writes.write_rate:int=0", "writes.write_restart:string=none", "writes.write_restart_after:duration=20ms", "writes.write_kill:bool=false", "writes.write_fanout:int=0", "writes.write_settle:duration=15s",
		"command.run:string=", "command.undo:string=", "command.command_timeout:duration=5s", "command.undo_timeout:duration=30s", "command.command_for:duration=0s", "command.ended_when:string="}
	if !slices.Equal(got, want) {
		t.Errorf("Options = %v; want %v", got, want)
	}
	for _, o := range reg.Options() {
		switch o.Key {
		case "dependency":
			if !slices.Equal(o.Enum, herd.Dependencies) {
				t.Errorf("dependency accepts %v; want %v", o.Enum, herd.Dependencies)
			}
		case "restart":
			if want := append(slices.Clone(herd.Parts), herd.ReplicaForm); !slices.Equal(o.Enum, want) || o.Pattern != herd.PartPattern {
				t.Errorf("restart accepts %v, pattern %q; want %v, one replica by name too", o.Enum, o.Pattern, want)
			}
		}
	}
}

// Setting an option through the registry sets the trigger's own field.
func TestSetReachesTheTrigger(t *testing.T) {
	reg := Default()
	for k, v := range map[string]string{"outage": "1500ms", "dependency": "redis", "burst": "7", "rolling": "true"} {
		if err := reg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	o, _ := reg.Get("outage")
	b, _ := reg.Get("burst")
	r, _ := reg.Get("restart")
	if out := o.(*Outage); out.For != herd.Duration(1500*time.Millisecond) || out.Dependency != "redis" || b.(*Burst).Clients != 7 || !r.(*Restart).Rolling {
		t.Errorf("after Set: outage %+v, burst %+v, restart %+v; want 1.5s on redis, 7 clients, rolling", o, b, r)
	}
	for _, tt := range []struct{ key, value, want string }{
		{"outage", "soon", `"soon" is not a duration`},
		{"burst", "many", `"many" is not a whole number`},
		{"rolling", "maybe", `"maybe" is not true or false`},
		{"colour", "red", `unknown trigger option "colour"`},
	} {
		if err := reg.Set(tt.key, tt.value); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Set(%s, %s) = %v; want %q", tt.key, tt.value, err, tt.want)
		}
	}
}

// The registry's JSON is the results' plan.trigger_options: the same flat
// object of every option, read back over the defaults.
func TestRegistryJSONRoundTrips(t *testing.T) {
	reg := Default()
	_ = reg.Set("slowdb_for", "4s")
	b, err := json.Marshal(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"outage":"2s","dependency":"postgres","slowdb_latency":"300ms","slowdb_for":"4s","burst":1000,"restart":"api","rolling":false,"write_burst":500,"write_keys":3,"write_rate":0,"write_restart":"none","write_restart_after":"20ms","write_kill":false,"write_fanout":0,"write_settle":"15s","run":"","undo":"","command_timeout":"5s","undo_timeout":"30s","command_for":"0s"}`
	if string(b) != want {
		t.Errorf("JSON = %s; want %s", b, want)
	}
	var back *Registry
	if err := json.Unmarshal([]byte(`{"slowdb_for":"4s","burst":5,"from_a_later_version":1}`), &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if want := strings.Replace(want, `"burst":1000`, `"burst":5`, 1); string(again) != want {
		t.Errorf("read back = %s; want %s (what is left out keeps its default, an unknown key is ignored)", again, want)
	}
}

func TestValidateNamesTheOptionAndTheAcceptedValues(t *testing.T) {
	reg := Default()
	for k, v := range map[string]string{"dependency": "dns", "burst": "0", "outage": "0s", "restart": "kafka", "slowdb_latency": "1m"} {
		_ = reg.Set(k, v)
	}
	var got []string
	for _, e := range reg.Validate() {
		got = append(got, e.Error())
	}
	slices.Sort(got)
	want := []string{
		"burst: 0 out of range (accepted: 1 to 10000 clients)",
		`dependency: unknown "dns" (accepted: postgres, redis)`,
		"outage: 0s out of range (accepted: more than 0, at most 1m)",
		`restart: unknown "kafka" (accepted: api, redis, postgres, memcached, mariadb, api-N or a list such as api-1,api-3)`,
		"slowdb_latency: 1m0s out of range (accepted: more than 0, at most 30s)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Validate =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNewRegistryRefusesDuplicates(t *testing.T) {
	for name, ts := range map[string][]Trigger{
		"a name twice":        {&Expire{}, &Expire{}},
		"an option key twice": {NewOutage(), &echo{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewRegistry with %s did not panic", name)
				}
			}()
			NewRegistry(ts...)
		}()
	}
}

// Clone copies the options: setting the copy leaves the original.
func TestClone(t *testing.T) {
	reg := Default()
	c := reg.Clone()
	_ = c.Set("burst", "3")
	if b, _ := reg.Get("burst"); b.(*Burst).Clients != 1000 {
		t.Errorf("original burst = %d after setting the clone's; want 1000", b.(*Burst).Clients)
	}
}

// echo is a trigger whose option takes outage's key.
type echo struct {
	For herd.Duration `json:"outage" help:"how long it echoes"`
}

func (*echo) Name() string     { return "echo" }
func (*echo) Describe() string { return "an echo" }
func (*echo) Plan(Env) string  { return "nothing" }
func (*echo) Detail() any      { return &struct{}{} }
func (*echo) Fire(context.Context, Env) (Fired, error) {
	return Fired{}, nil
}
