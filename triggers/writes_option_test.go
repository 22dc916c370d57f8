package triggers

import (
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// TestWritesRestartOptionLasts: a write restart says when it begins, so a
// plan can refuse one its after window ends before (it was skipped at
// run time, #41); without a restart it says nothing.
func TestWritesRestartOptionLasts(t *testing.T) {
	w := NewWrites()
	if key, d := w.Lasts(); key != "" || d != 0 {
		t.Errorf("Lasts() without a restart = (%q, %s); want (\"\", 0s)", key, d)
	}
	w.Restart, w.RestartAfter = "api", herd.Duration(9*time.Second)
	if key, d := w.Lasts(); key != "write_restart_after" || d != 9*time.Second {
		t.Errorf("Lasts() = (%q, %s); want (write_restart_after, 9s)", key, d)
	}
}
