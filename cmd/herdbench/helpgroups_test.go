package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// stampede, run and sweep show their flags by purpose, every one in a
// group, no line of their help over helpWidth columns.
func TestEveryFlagHasAHelpGroup(t *testing.T) {
	for _, name := range []string{"stampede", "run", "sweep"} {
		code, stdout, stderr := herdbench(t, name, "--help")
		if code != exitOK {
			t.Fatalf("%s --help = exit %d\n%s", name, code, stderr)
		}
		for i, line := range strings.Split(stdout, "\n") {
			if len(line) > helpWidth {
				t.Errorf("%s --help, line %d: %d columns (want at most %d): %s", name, i+1, len(line), helpWidth, line)
			}
		}
		if strings.Contains(stdout, "\n"+otherGroup+":") {
			t.Errorf("%s --help has flags in no group:\n%s", name, stdout[strings.Index(stdout, "\n"+otherGroup+":"):])
		}
		last := -1
		for _, g := range helpGroups {
			i := strings.Index(stdout, "\n"+g+":\n")
			if i < 0 && g != groupSweep {
				t.Errorf("%s --help lacks the group %q", name, g)
			}
			if i >= 0 && i < last {
				t.Errorf("%s --help shows %q out of order", name, g)
			}
			last = max(last, i)
		}
	}
	c := newRootCmd(nil, nil)
	for _, name := range []string{"stampede", "run", "sweep"} {
		sub, _, err := c.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		sub.Flags().VisitAll(func(f *pflag.Flag) {
			if groupOf(f) == otherGroup {
				t.Errorf("%s --%s is in no help group (helpgroups.go)", name, f.Name)
			}
		})
	}
}
