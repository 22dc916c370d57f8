package predict

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/reporters"
)

func slowdbPoolsOnce(t *testing.T) func() *Pools {
	read := 0
	t.Cleanup(func() {
		if read != 1 {
			t.Errorf("the pools were read %d times; want once", read)
		}
	})
	return func() *Pools { read++; return slowdbPools }
}

// Each arm of a real slowdb run gets the model's expectation beside its
// verdict, the same as herdbench model predicts from the file; an arm
// the model does not cover or lacks a figure for gets null and the
// reason, not an error; and the table names the arm whose verdict the
// model contradicts, with both words and both recoveries.
func TestExpectSetsTheModelBesideEachVerdict(t *testing.T) {
	rep := readResults(t, "testdata/slowdb.json")
	rep.Arms[2].Loop = nil // lock: refused before it would miss the stuck capacity
	want, err := Results(readResults(t, "testdata/slowdb.json"), slowdbPools)
	if err != nil {
		t.Fatal(err)
	}
	Expect(rep, slowdbPoolsOnce(t))
	none, budget, lock := rep.Arms[0].Model, rep.Arms[1].Model, rep.Arms[2].Model
	if none == nil || none.Expect == nil || *none.Expect != result.ModelTips || none.RecoveryMS != nil ||
		none.ShortestTipMS == nil || *none.ShortestTipMS != *want[0].Prediction.ShortestTipMS || len(none.Inputs) != len(want[0].Inputs) {
		t.Errorf("none's expectation %+v; want tips, no recovery, the model's shortest tip %d ms and its %d inputs",
			none, *want[0].Prediction.ShortestTipMS, len(want[0].Inputs))
	}
	if budget == nil || budget.Expect == nil || *budget.Expect != result.ModelRecovers || budget.RecoveryMS == nil ||
		*budget.RecoveryMS != *want[1].Prediction.RecoveryMS {
		t.Errorf("the budget's expectation %+v; want recovers, in the model's %d ms", budget, *want[1].Prediction.RecoveryMS)
	}
	if lock == nil || lock.Expect != nil || lock.RecoveryMS != nil || !strings.Contains(lock.Why, "strategy lock") {
		t.Errorf("lock's expectation %+v; want null, and why: its strategy", lock)
	}
	if none.Disagrees(rep.Arms[0]) || !budget.Disagrees(rep.Arms[1]) || lock.Disagrees(rep.Arms[2]) {
		t.Errorf("disagreements: none %v, budget %v, lock %v; want only the budget's (recovers, measured recovering)",
			none.Disagrees(rep.Arms[0]), budget.Disagrees(rep.Arms[1]), lock.Disagrees(rep.Arms[2]))
	}

	var out bytes.Buffer
	if err := reporters.Table(&out, rep); err != nil {
		t.Fatal(err)
	}
	line := "model     retry-budget=10%: verdict recovering, recovery not recovered; the model expects recovers, recovery " +
		reportersMS(*budget.RecoveryMS) + "\n"
	if !strings.Contains(out.String(), line) || strings.Count(out.String(), "model     ") != 1 {
		t.Errorf("table:\n%s\nwant one model line, the budget's:\n%s", out.String(), line)
	}

	// the results file holds it: null where there is none, and reads back
	saved := filepath.Join(t.TempDir(), "results.json")
	if err := reporters.WriteJSONFile(saved, rep); err != nil {
		t.Fatal(err)
	}
	back := readResults(t, saved)
	if m := back.Arms[1].Model; m == nil || *m.Expect != result.ModelRecovers || *m.RecoveryMS != *budget.RecoveryMS {
		t.Errorf("read back, the budget's expectation is %+v; want %+v", m, budget)
	}
	figs := back.Arms[2].Figures()
	for _, p := range []string{"model.expect", "model.recovery_ms", "model.shortest_tip_ms"} {
		if v, ok := figs[p]; !ok || v != nil {
			t.Errorf("lock's figure %s: %v (held %v); want null", p, v, ok)
		}
	}
}

// An arm whose runs lack a figure the model needs gets no expectation
// and the reason; a run of another trigger gets none at all.
func TestExpectIsNoErrorWithoutTheInputs(t *testing.T) {
	rep := readResults(t, "testdata/slowdb.json")
	rep.Arms[0].Loop = nil
	Expect(rep, slowdbPoolsOnce(t))
	if m := rep.Arms[0].Model; m == nil || m.Expect != nil || m.RecoveryMS != nil ||
		!strings.Contains(m.Why, "loop.db_qps.after") {
		t.Errorf("none without its stuck capacity: %+v; want a null expectation naming loop.db_qps.after", m)
	}
	if m := rep.Arms[1].Model; m == nil || m.Expect == nil {
		t.Errorf("the budget's expectation %+v; want one still", m)
	}

	other := readResults(t, "../reporters/testdata/results.json")
	other.Plan.Trigger = "conndrop"
	Expect(other, func() *Pools { t.Error("the pools were read for a conndrop run"); return nil })
	for _, a := range other.Arms {
		if a.Model != nil {
			t.Errorf("conndrop run's arm %s: model %+v; want none (absent)", a.Name, a.Model)
		}
	}
}

// reportersMS is a recovery of a second or more as the table prints it.
func reportersMS(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(10 * time.Millisecond).String()
}
