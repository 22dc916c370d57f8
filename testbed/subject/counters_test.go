package subject

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/admin"
)

// The engine's APICounters, which Counters fills, are the replicas'
// counters under the same names: the results' api.* figures read what
// the replicas count.
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
	if got, want := names(result.APICounters{}), names(admin.Counters{}); !slices.Equal(got, want) {
		t.Errorf("APICounters fields %q; the replicas' admin.Counters %q", got, want)
	}
	c := admin.Counters{Requests: 1, Loads: 2, LoadErrors: 3, LoadRetries: 4, EarlyLoads: 5, Coalesced: 6, StaleServed: 7,
		LockWaits: 8, DBNewConns: 9, DBCanceledAcquires: 10}
	b, _ := json.Marshal(c)
	var e result.APICounters
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if back, _ := json.Marshal(e); string(back) != string(b) {
		t.Errorf("the replicas' counters %s read back as %s", b, back)
	}
}
