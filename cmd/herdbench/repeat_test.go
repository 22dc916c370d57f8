package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment"
)

// --repeat takes 1 to 20; anything else, 0 included, exits 2 naming the
// flag, or the file's line, and the accepted range.
func TestRepeatOutOfRange(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("load:\n  rate: 100\nrepeat: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--repeat", "0"}, "--repeat: 0 out of range (accepted: 1 to 20 runs of each arm)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--repeat", "21"}, "--repeat: 21 out of range (accepted: 1 to 20 runs of each arm)"},
		{[]string{"stampede", "--dry-run", "--state-dir", empty, "--repeat", "-1"}, "--repeat: -1 out of range (accepted: 1 to 20 runs of each arm)"},
		{[]string{"run", file, "--dry-run", "--state-dir", empty}, file + ":3: repeat: 0 out of range (accepted: 1 to 20 runs of each arm)"},
	} {
		code, _, stderr := herdbench(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("herdbench %s = exit %d, stderr %q; want exit %d, stderr containing %q", strings.Join(c.args, " "), code, stderr, exitUsage, c.want)
		}
	}
}

// A dry run says how many runs of every arm, and counts the load of them
// all: three runs send three times one run's requests.
func TestRepeatDryRun(t *testing.T) {
	empty := t.TempDir()
	args := []string{"stampede", "--dry-run", "--state-dir", empty, "--arms", "none,lock", "--warmup", "1s", "--before", "1s", "--after", "2s"}
	code, once, stderr := herdbench(t, args...)
	if code != exitOK {
		t.Fatalf("herdbench %s = exit %d, %s", strings.Join(args, " "), code, stderr)
	}
	code, thrice, stderr := herdbench(t, append(args, "--repeat", "3")...)
	if code != exitOK {
		t.Fatalf("herdbench %s --repeat 3 = exit %d, %s", strings.Join(args, " "), code, stderr)
	}
	if strings.Contains(once, "repeat") {
		t.Errorf("a dry run of one run mentions a repeat:\n%s", once)
	}
	for _, want := range []string{
		"repeat    3 runs of every arm, interleaved (every arm, then every arm again): 24s of load in all",
		"over 2 arms × 3 runs",
	} {
		if !strings.Contains(thrice, want) {
			t.Errorf("dry run with --repeat 3 lacks %q:\n%s", want, thrice)
		}
	}
	if got, want := total(t, thrice), 3*total(t, once); got != want {
		t.Errorf("--repeat 3 sends %d requests, about; want 3 × %d", got, want/3)
	}
}

// total is the requests a dry run's total line counts.
func total(t *testing.T, out string) int {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "total     "); ok {
			n := 0
			for _, r := range strings.Fields(rest)[0] {
				if r >= '0' && r <= '9' {
					n = n*10 + int(r-'0')
				}
			}
			return n
		}
	}
	t.Fatalf("no total line in:\n%s", out)
	return 0
}

// The progress line names the round of a repeated run, and only then.
func TestProgressNamesTheRound(t *testing.T) {
	p := experiment.Progress{Arm: 2, Arms: 3, Name: "lock", Phase: experiment.PhaseFill}
	if got := armText(p); got != "arm 2/3 lock" {
		t.Errorf("armText(one run) = %q; want arm 2/3 lock", got)
	}
	p.Run, p.Runs = 2, 3
	if got := armText(p); got != "arm 2/3 lock (round 2/3)" {
		t.Errorf("armText(round 2 of 3) = %q; want arm 2/3 lock (round 2/3)", got)
	}
	var b strings.Builder
	l := newProgressLine(&b, false)
	for _, run := range []int{1, 1, 2} { // the same arm again in round 2 is a new line
		p.Run = run
		l.update(p)
	}
	if got := strings.Count(b.String(), "\n"); got != 2 {
		t.Errorf("progress lines for arm 2 in rounds 1, 1, 2 = %q; want 2 lines", b.String())
	}
}
