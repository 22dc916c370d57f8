package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testCommand is the README's test command, which .ci/run must run exactly.
const testCommand = "go test -p 4 -timeout 20m ./..."

func TestCIRunsTheREADMETestCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```sh\n"+testCommand+"\n```") {
		t.Errorf("README.md does not give %q as the test command", testCommand)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	if last := lines[len(lines)-1]; last != testCommand {
		t.Errorf(".ci/run ends with %q; want the README's test command %q", last, testCommand)
	}
}

// The README's CI gate quotes examples/ci-gate.yaml: each of its YAML
// blocks is in that file as written, so the gates it shows are the ones
// `herdbench run examples/ci-gate.yaml` checks.
func TestREADMEQuotesTheCIGateFile(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("../../examples/ci-gate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md quotes no YAML block; want the CI gate's gates")
	}
	for _, b := range blocks {
		if !strings.Contains(string(file), b[1]) {
			t.Errorf("README.md quotes\n%s\nwhich examples/ci-gate.yaml does not hold as written", b[1])
		}
	}
}

// The README's map of docs/ names every doc there, once, and nothing else.
func TestREADMEMapsEveryDoc(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\| \[[a-z-]+\.md\]\(docs/([a-z-]+\.md)\) \|`).FindAllStringSubmatch(string(readme), -1) {
		mapped[m[1]]++
	}
	for _, d := range docs {
		name := filepath.Base(d)
		if mapped[name] != 1 {
			t.Errorf("README.md's map of docs/ names %s %d times; want once", name, mapped[name])
		}
		delete(mapped, name)
	}
	for name := range mapped {
		t.Errorf("README.md's map of docs/ names %s, which docs/ does not hold", name)
	}
}
