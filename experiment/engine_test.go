package experiment

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/testbed/api"
)

// stillToMove is what the engine's packages still import of the testbed,
// each with why; issue #38 moves the rest out, and this list only
// shrinks. A package missing here may import nothing under testbed/.
var stillToMove = map[string][]string{
	// the testbed's kind of target: its status, replicas and edges
	"targets": {"testbed", "testbed/api", "testbed/edge"},
}

// The engine's packages import of the testbed only what stillToMove
// lists, directly; a package that drops one must drop it from the list
// too, so the list says where the reshape stands.
func TestTheEngineImportsOnlyWhatIsStillToMoveOfTheTestbed(t *testing.T) {
	const mod = "github.com/herdbench/herdbench/"
	engine := []string{"experiment", "sweep", "workers", "triggers", "reporters", "scenario", "gates", "targets", "load", "retry", "observe", "baseline"}
	args := append([]string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, prefixed(mod, engine)...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		var got []string
		for _, imp := range fields[1:] {
			if rel := strings.TrimPrefix(imp, mod); rel == "testbed" || strings.HasPrefix(rel, "testbed/") {
				got = append(got, rel)
			}
		}
		if want := stillToMove[pkg]; !slices.Equal(got, want) {
			t.Errorf("%s imports %q of the testbed; the list says %q (a new import moves the wrong way; a dropped one leaves the list)", pkg, got, want)
		}
	}
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// The engine's APICounters are the replicas' counters under the same
// names: the results' api.* figures read what the replicas count.
func TestAPICountersNameWhatTheReplicasCount(t *testing.T) {
	names := func(v any) []string {
		var out []string
		for f := range reflect.TypeOf(v).Fields() {
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
				out = append(out, f.Name+":"+tag)
			}
		}
		return out
	}
	if got, want := names(APICounters{}), names(api.Counters{}); !slices.Equal(got, want) {
		t.Errorf("APICounters fields %q; the replicas' api.Counters %q", got, want)
	}
	c := api.Counters{Requests: 1, Loads: 2, LoadErrors: 3, LoadRetries: 4, EarlyLoads: 5, Coalesced: 6, StaleServed: 7,
		LockWaits: 8, DBNewConns: 9, DBCanceledAcquires: 10}
	b, _ := json.Marshal(c)
	var e APICounters
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if back, _ := json.Marshal(e); string(back) != string(b) {
		t.Errorf("the replicas' counters %s read back as %s", b, back)
	}
}

// since reads a counter that went down as reset: what was counted before
// plus what it counted since.
func TestCountersSinceReadAResetAsAReset(t *testing.T) {
	atT := APICounters{Requests: 100, Loads: 10, Busy: 3}
	end := APICounters{Requests: 150, Loads: 4, Busy: 1}
	got := end.since(atT)
	if got.Requests != 150 || got.Loads != 14 || got.Busy != 1 {
		t.Errorf("since = %+v; want requests 150 (grown), loads 14 (10, reset, 4 since), busy 1 (the gauge at the end)", got)
	}
}
