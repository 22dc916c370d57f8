package subject

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/admin"
)

// The counters the testbed declares to the engine are the replicas'
// counters under the same names, in the same order: the results' api.*
// figures read what the replicas count, and write it as the replicas'
// own JSON does.
func TestTheDeclaredCountersAreWhatTheReplicasCount(t *testing.T) {
	var tags []string
	for f := range reflect.TypeFor[admin.Counters]().Fields() {
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
			tags = append(tags, tag)
		}
	}
	var names []string
	for _, c := range counters {
		names = append(names, c.name)
	}
	if strings.Join(names, " ") != strings.Join(tags, " ") {
		t.Errorf("declared %q; the replicas' admin.Counters %q", names, tags)
	}
	if got := result.DeclaredCounters(); strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("the engine knows %q; want the testbed's %q", got, names)
	}
	c := admin.Counters{Requests: 1, Loads: 2, LoadErrors: 3, LoadRetries: 4, EarlyLoads: 5, Coalesced: 6, StaleServed: 7,
		LockWaits: 8, DBNewConns: 9, DBCanceledAcquires: 10}
	want, _ := json.Marshal(c)
	var ours result.Counters
	for _, x := range counters {
		ours = append(ours, result.Counter{Name: x.name, Value: x.of(&c)})
	}
	if got, _ := json.Marshal(ours); string(got) != string(want) {
		t.Errorf("the results' counters %s; the replicas' %s", got, want)
	}
}
