package predict

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/herdbench/herdbench/sweep"
)

// The retry storm's repeat-3 sweeps at three rates (2026-12-03,
// docs/metastability.md, "The retry storm at three rates"), their runs'
// timelines left out: each arm's prediction from its own runs' figures
// is the table's, and where the sweep found a tip the model's falls
// within 25% of it.
func TestTheRetryStormSweepsBesideTheModel(t *testing.T) {
	for _, c := range []struct {
		file      string
		to        float64 // the axis' TO the prediction looks to, ms: the sweep's 8 s, or past it
		state     string
		predicted float64 // ms
	}{
		{"r300-noretry", 8000, sweep.PredictedFound, 6160},
		{"r100-fixed", 8000, sweep.PredictedFound, 8000},
		{"r200-jitter", 8000, sweep.PredictedFound, 2450},
		{"r100-jitter", 8000, sweep.PredictedNone, 0},
		{"r100-jitter", 16000, sweep.PredictedFound, 8420},
		// no run tipped: no stuck capacity measured, no prediction
		{"r200-noretry", 8000, sweep.PredictedRefused, 0},
		{"r200-budget", 8000, sweep.PredictedRefused, 0},
		{"r100-noretry", 8000, sweep.PredictedRefused, 0},
		{"r100-budget", 8000, sweep.PredictedRefused, 0},
	} {
		res := readSweep(t, "storm", c.file+".json")
		res.Vary.To = c.to
		Sweep(&res, stormPools)
		a := res.Arms[0]
		p := a.Predicted
		if p.State != c.state || (c.state == sweep.PredictedFound && *p.Value != c.predicted) {
			t.Errorf("%s to %v ms: predicted %s %s (%s); the table's %s %v ms", c.file, c.to, p.State, p.Text, p.Note, c.state, c.predicted)
			continue
		}
		if c.state == sweep.PredictedFound && a.Tipping.Value != nil {
			if off := *p.Value / *a.Tipping.Value - 1; off < -0.25 || off > 0.25 {
				t.Errorf("%s: predicted %v ms, %+.0f%% of the measured %v ms; tolerance 25%%", c.file, *p.Value, 100*off, *a.Tipping.Value)
			}
		}
	}
}

// readSweep is a sweep's results file of testdata.
func readSweep(t *testing.T, path ...string) sweep.Results {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	var res sweep.Results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("%s: %v", filepath.Join(path...), err)
	}
	return res
}
