package experiment

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
)

// The engine's packages import nothing under testbed/, directly or
// through another package: the testbed is a plug-in of the engine
// (testbed/subject), which the command line puts in; a new import the
// other way fails here, naming the package that pulls it in.
func TestTheEngineImportsNothingOfTheTestbed(t *testing.T) {
	const mod = "github.com/herdbench/herdbench/"
	engine := []string{"experiment", "sweep", "workers", "triggers", "reporters", "livemetrics", "scenario", "gates", "targets", "load", "retry", "observe", "baseline", "service", "predict", "model"}
	for _, pkg := range engine {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			for _, imp := range fields[1:] {
				if rel := strings.TrimPrefix(imp, mod); rel == "testbed" || strings.HasPrefix(rel, "testbed/") {
					t.Errorf("%s imports %s, through %s (accepted: nothing under testbed/; the testbed plugs in through testbed/subject)", pkg, rel, fields[0])
				}
			}
		}
	}
}

// Since reads a counter that went down as reset: what was counted before
// plus what it counted since; a counter T did not have counts from zero.
func TestCountersSinceReadAResetAsAReset(t *testing.T) {
	atT := result.Counters{{Name: "requests", Value: 100}, {Name: "loads", Value: 10}}
	end := result.Counters{{Name: "requests", Value: 150}, {Name: "loads", Value: 4}, {Name: "new", Value: 3}}
	got := end.Since(atT)
	if got.Value("requests") != 150 || got.Value("loads") != 14 || got.Value("new") != 3 {
		t.Errorf("since = %+v; want requests 150 (grown), loads 14 (10, reset, 4 since), new 3 (from zero)", got)
	}
	if b, _ := json.Marshal(got); string(b) != `{"requests":150,"loads":14,"new":3}` {
		t.Errorf("counters as JSON: %s; want an object in their order", b)
	}
	var back result.Counters
	if err := json.Unmarshal([]byte(`{"loads":2,"requests":1}`), &back); err != nil || back[0].Name != "loads" || back.Value("requests") != 1 {
		t.Errorf("counters read back: %+v, %v; want the file's order and values", back, err)
	}
}

// An arm whose drain gave up is measured all the same, and says so in
// timing.drain_timed_out and a warning; one whose drain ended says
// nothing.
func TestADrainThatGaveUpIsInTheResults(t *testing.T) {
	var ended, gaveUp result.ArmResult
	ended.DrainedOrNot(nil)
	gaveUp.DrainedOrNot(fmt.Errorf("drain: after 15s the service still ran 2 statements: %w", plan.ErrStillRunning))
	if ended.Timing.DrainTimedOut || len(ended.Warnings) != 0 {
		t.Errorf("a drain that ended: %+v, warnings %q; want neither", ended.Timing, ended.Warnings)
	}
	if !gaveUp.Timing.DrainTimedOut || len(gaveUp.Warnings) != 1 || !strings.Contains(gaveUp.Warnings[0], "still ran 2 statements") {
		t.Errorf("a drain that gave up: %+v, warnings %q; want drain_timed_out and the drain's words", gaveUp.Timing, gaveUp.Warnings)
	}
}
