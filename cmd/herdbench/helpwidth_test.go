package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// Every command's help, hidden ones included, fits helpWidth columns:
// the test walks cobra's command tree from the root, so a command added
// later is held to it too.
func TestEveryCommandsHelpFitsTheWidth(t *testing.T) {
	root := newRootCmd(nil, nil)
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		n++
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Fatalf("%s --help: %v", c.CommandPath(), err)
		}
		if out.Len() == 0 {
			t.Errorf("%s --help printed nothing", c.CommandPath())
		}
		for i, line := range strings.Split(out.String(), "\n") {
			if w := utf8.RuneCountInString(line); w > helpWidth {
				t.Errorf("%s --help, line %d: %d columns (want at most %d): %s", c.CommandPath(), i+1, w, helpWidth, line)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 15 {
		t.Errorf("walked %d commands; want every command herdbench has, 15 or more", n)
	}
}
