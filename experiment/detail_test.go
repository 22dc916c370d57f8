package experiment

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/triggers"
)

// A trigger's detail reads back from results as the type its trigger
// wrote; an unknown trigger's stays JSON values; a field the type does not
// have is an error, not a silent loss.
func TestTriggerDetailReadsBackTyped(t *testing.T) {
	want := result.TriggerResult{Name: "flush", Detail: &triggers.FlushDetail{KeysFlushed: 7, Pattern: "item:*"}}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got result.TriggerResult
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %s = %#v, %v; want %#v", b, got.Detail, err, want.Detail)
	}
	var other result.TriggerResult
	if err := json.Unmarshal([]byte(`{"name":"drizzle","fired_at":null,"detail":{"dropped":3}}`), &other); err != nil ||
		!reflect.DeepEqual(other.Detail, map[string]any{"dropped": 3.0}) {
		t.Errorf("an unknown trigger's detail = %#v, %v; want its JSON values", other.Detail, err)
	}
	err = json.Unmarshal([]byte(`{"name":"flush","fired_at":null,"detail":{"keys_flushd":3}}`), &other)
	if err == nil || !strings.Contains(err.Error(), "keys_flushd") {
		t.Errorf("a detail with a field flush's has not: %v; want an error naming it", err)
	}
}

// A gate may name a number of any trigger's detail, now that details are
// typed: trigger.detail.lost (writes), trigger.detail.keys_removed
// (expire); the detail itself is no number.
func TestGatePathsHoldTheTriggersDetails(t *testing.T) {
	paths := result.GatePaths()
	for _, want := range []string{"trigger.detail.lost", "trigger.detail.keys_removed", "trigger.detail.down_ms"} {
		if !slices.Contains(paths, want) {
			t.Errorf("GatePaths lacks %s", want)
		}
	}
	if slices.Contains(paths, "trigger.detail") {
		t.Error("GatePaths has trigger.detail, which is no number")
	}
}
