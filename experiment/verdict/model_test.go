package verdict

import (
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/model"
)

// TestModelReadsRecoveryAsTheVerdict: the model reads its recovery by
// this package's band (model.VerdictBand, model.RowWidth), so that a
// predicted recovery is the measured recovery_ms's kind; a change to
// the rule here must reach the model.
func TestModelReadsRecoveryAsTheVerdict(t *testing.T) {
	want := model.Band{Hold: RecoveryHold, Relapse: RelapseSpan, Ratio: recoveryRatio,
		QPSFloor: recoveryQPSFloor, P99Floor: recoveryP99Floor * time.Millisecond}
	if model.VerdictBand != want {
		t.Errorf("model.VerdictBand = %+v; the verdict's band is %+v", model.VerdictBand, want)
	}
	if model.RowWidth != result.RowWidth {
		t.Errorf("model.RowWidth = %v; the timeline's rows are %v", model.RowWidth, result.RowWidth)
	}
	if model.DefaultOptions.Band != model.VerdictBand {
		t.Errorf("model.DefaultOptions.Band = %+v; want the verdict's", model.DefaultOptions.Band)
	}
}
