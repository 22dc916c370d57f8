package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
)

// TestSettingsAreCapped pins the caps of a sweep's own limits: a --repeat
// above the stampede's, and a --max-runs or --max-time so large the dry
// run's arithmetic overflowed ("at most -32 runs").
func TestSettingsAreCapped(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(*Settings)
		want string
	}{
		{"repeat", func(s *Settings) { s.Repeat = plan.MaxRepeat + 1 }, "repeat: 21 out of range (accepted: 1 to 20"},
		{"huge repeat", func(s *Settings) { s.Repeat = 1<<63 - 1 }, "repeat: 9223372036854775807 out of range"},
		{"max runs", func(s *Settings) { s.MaxRuns = MaxRuns + 1 }, "max_runs: 10001 out of range (accepted: 1 to 10000"},
		{"max time", func(s *Settings) { s.MaxTime = herd.Duration(2000000 * time.Hour) }, "max_time: 2000000h0m0s out of range"},
	} {
		s := DefaultSettings
		tt.set(&s)
		if got := s.Validate().Error(); !strings.Contains(got, tt.want) {
			t.Errorf("%s: Validate() = %q; want %q", tt.name, got, tt.want)
		}
	}
	if errs := DefaultSettings.Validate(); len(errs) > 0 {
		t.Errorf("DefaultSettings.Validate() = %v; want none", errs)
	}
}
