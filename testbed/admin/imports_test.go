package admin

import (
	"os/exec"
	"strings"
	"testing"
)

// The wire contract imports only the standard library and package herd,
// directly or through another package: a harness package that talks to
// the replicas takes in none of the server's dependencies (go-redis, pgx,
// the Prometheus client...). A new import fails here, naming the package
// that pulls it in.
func TestAdminImportsOnlyTheStandardLibraryAndHerd(t *testing.T) {
	const mod = "github.com/herdbench/herdbench/"
	allowed := map[string]bool{mod + "testbed/admin": true, mod + "herd": true}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{join .Imports \" \"}}", mod+"testbed/admin").Output()
	if err != nil {
		t.Fatalf("go list -deps testbed/admin: %v", err)
	}
	std := map[string]bool{}
	var lines [][]string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		std[f[0]] = f[1] == "true"
		lines = append(lines, f)
	}
	for _, f := range lines {
		for _, imp := range f[2:] {
			if imp != "C" && !std[imp] && !allowed[imp] { // C: cgo, under net and runtime
				t.Errorf("testbed/admin depends on %s, through %s (accepted: the standard library and %sherd)", imp, f[0], mod)
			}
		}
	}
	if len(lines) < 10 {
		t.Errorf("go list -deps testbed/admin listed %d packages; want its whole graph", len(lines))
	}
}
