package main

import (
	"os"
	"strings"
	"testing"
)

// testCommand is the README's test command, which .ci/run must run exactly.
const testCommand = "go test ./..."

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
