package replica

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Only what runs a server imports the server, testbed/api: the words of a
// replica are this package's, which imports no driver and nothing of the
// server. A new importer fails here, naming it; a package leaves the list
// once it no longer needs the server.
func TestOnlyWhatRunsTheServerImportsIt(t *testing.T) {
	const mod = "github.com/herdbench/herdbench/"
	allowed := map[string]string{
		"cmd/herdbench/testbedcmd": "testbed serve runs a replica",
		"testbed/edge":             "an edge replica answers with the server's RespondJSON, RespondError, ReadReset and Serve",
		"testbed/store":            "the stores seed and count with the server's schema, item queries and cache client",
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list %s...: %v", mod, err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		if _, ok := allowed[pkg]; ok || pkg == "testbed/api" || !slices.Contains(fields[1:], mod+"testbed/api") {
			continue
		}
		t.Errorf("%s imports testbed/api (accepted: the words of a replica from testbed/replica; the server only where it runs: %s)", pkg, strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
	}

	deps, err := exec.Command("go", "list", "-deps", mod+"testbed/replica").Output()
	if err != nil {
		t.Fatalf("go list -deps testbed/replica: %v", err)
	}
	for dep := range strings.SplitSeq(strings.TrimSpace(string(deps)), "\n") {
		for _, no := range []string{mod + "testbed/api", "github.com/redis/", "github.com/jackc/", "github.com/go-sql-driver/", "github.com/bradfitz/gomemcache"} {
			if strings.HasPrefix(dep, no) {
				t.Errorf("testbed/replica depends on %s (accepted: no driver, nothing of the server)", dep)
			}
		}
	}
}
