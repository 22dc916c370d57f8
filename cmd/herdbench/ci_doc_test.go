package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docs/ci.md's workflow is valid YAML, and every herdbench command in it
// names a real command, real flags and files that exist.
func TestCIDocWorkflow(t *testing.T) {
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	var commands []string
	for _, blk := range blocks {
		var doc any
		if err := yaml.Unmarshal([]byte(blk[1]), &doc); err != nil {
			t.Errorf("docs/ci.md: a YAML block does not parse: %v\n%s", err, blk[1])
			continue
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, v := range x {
					if s, ok := v.(string); ok && k == "run" && strings.Contains(s, "./herdbench ") {
						commands = append(commands, s)
					}
					walk(v)
				}
			case []any:
				for _, v := range x {
					walk(v)
				}
			}
		}
		walk(doc)
	}
	if len(commands) < 2 {
		t.Fatalf("docs/ci.md: %d herdbench commands in its workflows; want the gated run and the baseline comparison", len(commands))
	}
	for _, c := range commands {
		c = strings.ReplaceAll(c, "\\\n", " ")
		c, _, _ = strings.Cut(c, ">>") // the shell's redirection
		fields := strings.Fields(c)
		args := fields[1:] // after ./herdbench
		root := newRootCmd(io.Discard, io.Discard)
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("docs/ci.md: %q names no herdbench command: %v", c, err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("docs/ci.md: %q: %v", c, err)
		}
		for _, a := range cmd.Flags().Args() {
			if strings.HasPrefix(a, "examples/") {
				if _, err := os.Stat("../../" + a); err != nil {
					t.Errorf("docs/ci.md: %q names %s: %v", c, a, err)
				}
			}
		}
	}
}
