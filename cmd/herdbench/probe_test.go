package main

import (
	"strings"
	"testing"
)

// The command trigger's end probe is a host the run touches: refused when
// it is neither loopback nor allowed, on the testbed and on a target file.
func TestAnEndProbeFarAwayIsRefused(t *testing.T) {
	code, _, stderr := herdbench(t, "stampede", "--dry-run", "--state-dir", t.TempDir(), "--trigger", "command", "--run", "true",
		"--ended-when", "http://10.1.1.1/healthz")
	if code != exitUsage || !strings.Contains(stderr, "--ended-when: host 10.1.1.1 is not loopback and not allowed (accepted: loopback, or --allow-host 10.1.1.1)") {
		t.Errorf("a far end probe on the testbed = exit %d, %s; want 2, refused", code, stderr)
	}
	code, _, stderr = herdbench(t, "stampede", "--dry-run", "--state-dir", t.TempDir(), "--trigger", "command", "--run", "true",
		"--ended-when", "http://127.0.0.1:1/healthz")
	if code != exitOK {
		t.Errorf("a loopback end probe = exit %d, %s; want 0", code, stderr)
	}
}
