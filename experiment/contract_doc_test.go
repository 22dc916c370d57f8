package experiment_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	_ "github.com/herdbench/herdbench/testbed/subject" // the testbed's counters' rows, as its kind declares them
)

// contractDocFile holds the results contract, whose table of an arm's
// figures ContractRows renders, the testbed's counters' rows included.
const contractDocFile = "../docs/stampede.md"

const contractHeadingText = "## The results contract"

// The table in docs/stampede.md is the one contract renders; -update
// writes it there.
func TestContractTableIsTheDocs(t *testing.T) {
	b, err := os.ReadFile(contractDocFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start, end := contractSpan(t, doc)
	want := result.ContractTable()
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(contractDocFile, []byte(doc[:start]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[start:end]; got != want {
		t.Errorf("%s: the results contract's table differs from contract (experiment/contract.go); edit the rows there and run go test ./experiment -run Contract -update.\ngot:\n%s\nwant:\n%s", contractDocFile, got, want)
	}
}

// contractSpan is where the results contract's table of an arm's figures
// lies in doc: from its header line to the end of its last row.
func contractSpan(t *testing.T, doc string) (start, end int) {
	t.Helper()
	i := strings.Index(doc, contractHeadingText)
	if i < 0 {
		t.Fatalf("%s: no %q section", contractDocFile, contractHeadingText)
	}
	j := strings.Index(doc[i:], "\n| field | source | window |\n")
	if j < 0 {
		t.Fatalf("%s: no table under %q", contractDocFile, contractHeadingText)
	}
	start = i + j + 1
	end = start
	for line := range strings.Lines(doc[start:]) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		end += len(line)
	}
	return start, end
}
