package local

import (
	"errors"
	"strings"
	"testing"
)

func TestMissingBinariesNameTheirPackages(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on PATH
	saved := pgSearchGlobs
	pgSearchGlobs = []string{t.TempDir() + "/*/bin"} // nowhere else either
	t.Cleanup(func() { pgSearchGlobs = saved })

	err := CheckBinaries()
	var missing *MissingBinaryError
	if !errors.As(err, &missing) {
		t.Fatalf("CheckBinaries() without binaries = %v; want a MissingBinaryError", err)
	}
	for _, want := range []string{
		"redis-server not found", "apt-get install redis-server", "brew install redis`",
		"postgres and initdb not found", "apt-get install postgresql", "brew install postgresql@15",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckBinaries() = %q; want it to say %q", err, want)
		}
	}
}
