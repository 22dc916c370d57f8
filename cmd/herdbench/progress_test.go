package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// On a terminal the stampede keeps one line up to date: every phase with
// its own time, the fill's included, the live figures, and the run's
// elapsed and remaining time; the line is gone before the table.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	dir := stateDir(t)
	cmd := exec.Command(localtest.Binary(), "stampede", "--state-dir", dir, "--arms", "none,lock", "--rate", "100",
		"--keys", "2000", "--hot-keys", "20", "--warmup", "0s", "--before", "1s", "--after", "1s", "--results-dir", t.TempDir())
	for _, kv := range os.Environ() { // the line is off in CI; this is a terminal
		if !strings.HasPrefix(kv, "CI=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&out, tty); close(copied) }() // ends with EIO when the process exits
	if err := cmd.Wait(); err != nil {
		t.Fatalf("stampede under a terminal: %v\n%s", err, out.String())
	}
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
	}
	s := out.String()
	lines := strings.Split(s, "\r\x1b[K")
	var fill, after, left []string
	fillRE := regexp.MustCompile(`^arm 1/2 none  fill (\d+\.\d)s  \|  run 0:\d\d, about 0:\d\d left$`)
	afterRE := regexp.MustCompile(`^arm 2/2 lock  after (\d+\.\d)s  [\d,]+ requests  db \d+ q/s  \|  run 0:\d\d, about (0:\d\d) left$`)
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if m := fillRE.FindStringSubmatch(l); m != nil {
			fill = append(fill, m[1])
		}
		if m := afterRE.FindStringSubmatch(l); m != nil {
			after = append(after, m[1])
			left = append(left, m[2])
		}
	}
	if len(fill) < 2 || fill[len(fill)-1] == "0.0" {
		t.Errorf("fill lines %q; want the fill's own time ticking", fill)
	}
	if len(after) < 3 || left[0] < left[len(left)-1] {
		t.Errorf("after lines %q, left %q; want the phase's time ticking and the time left going down", after, left)
	}
	tableAt := regexp.MustCompile(`arm +db queries`).FindStringIndex(s)
	if tableAt == nil || !strings.HasSuffix(s[:tableAt[0]], "\r\x1b[K") {
		t.Errorf("output:\n%q\nwant the progress line cleared before the table", s)
	}
}
