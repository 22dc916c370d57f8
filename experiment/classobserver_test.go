package experiment

import (
	"slices"
	"testing"
	"time"

	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

type classSeen struct {
	names []string
	herd  int
}

type classRecorder struct{ seen map[string]classSeen }

func (c *classRecorder) Arm(string, bool)                      {}
func (c *classRecorder) Request(string, string, load.Record)   {}
func (c *classRecorder) Trigger(string, time.Time)             {}
func (c *classRecorder) Classes(arm string, n []string, h int) { c.seen[arm] = classSeen{n, h} }

// An observer that listens for classes is told a target's, through
// Observers too, the herd's marked; a target without classes tells none.
func TestObserversAreToldTheClasses(t *testing.T) {
	rec := &classRecorder{seen: map[string]classSeen{}}
	observeClasses(Observers{rec}, "lock", []targets.Class{{Name: "search"}, {Name: "item", Herd: true}})
	observeClasses(rec, "none", nil)
	got, ok := rec.seen["lock"]
	if !ok || !slices.Equal(got.names, []string{"search", "item"}) || got.herd != 1 {
		t.Errorf("lock's classes = %+v, %v; want search, item with the herd at 1", got, ok)
	}
	if _, ok := rec.seen["none"]; ok {
		t.Errorf("an arm without classes was told some")
	}
}
