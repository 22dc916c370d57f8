package workers

import (
	"strings"
	"testing"
)

// VegetaFile names each worker's file apart, and CheckVegetaFile takes only
// a path below the working directory.
func TestVegetaFileNames(t *testing.T) {
	for _, tt := range []struct {
		file string
		i    int
		want string
	}{{"results.bin", 0, "results.worker-0.bin"}, {"vegeta/results.bin", 2, "vegeta/results.worker-2.bin"}, {"out/r", 1, "out/r.worker-1"}} {
		if got := VegetaFile(tt.file, tt.i); got != tt.want {
			t.Errorf("VegetaFile(%q, %d) = %q; want %q", tt.file, tt.i, got, tt.want)
		}
	}
	for file, ok := range map[string]bool{"r.bin": true, "a/b/r.bin": true, "/tmp/r.bin": false, "../r.bin": false, "a/../../r.bin": false, "": false} {
		if err := CheckVegetaFile(file); (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "(accepted: such as vegeta/results.bin") {
			t.Errorf("CheckVegetaFile(%q) = %v; want ok %v, or the accepted form", file, err, ok)
		}
	}
}

// A worker asked to append a run's later arm to a file it does not hold
// (it restarted between arms) refuses, rather than start a file that
// lacks the run's first arms; one it cannot create is refused naming it.
func TestAWorkerRefusesAVegetaFileItCannotWrite(t *testing.T) {
	t.Chdir(t.TempDir())
	w := NewWorker("test", nil, "")
	_, err := w.vegetaFor(Share{Index: 1, Vegeta: &VegetaOut{File: "v/r.bin", Series: "s1", Arm: "lock"}})
	if err == nil || !strings.Contains(err.Error(), "vegeta=v/r.worker-1.bin: the run's earlier arms were written by a file this worker no longer holds") {
		t.Errorf("a later arm with no file open: %v; want it refused", err)
	}
	if _, err := w.vegetaFor(Share{Index: 1, Vegeta: &VegetaOut{File: "v/r.bin", Series: "s1", Arm: "none", First: true}}); err != nil {
		t.Fatalf("the first arm: %v", err)
	}
	if v, err := w.vegetaFor(Share{Index: 1, Vegeta: &VegetaOut{File: "v/r.bin", Series: "s1", Arm: "lock"}}); err != nil || v != w.vegeta {
		t.Errorf("the run's second arm: %v, %v; want the file the first opened", v, err)
	}
	if _, err := w.vegetaFor(Share{Index: 0, Vegeta: &VegetaOut{File: "v/r.worker-1.bin/x.bin", Series: "s2", Arm: "none", First: true}}); err == nil ||
		!strings.Contains(err.Error(), "vegeta=v/r.worker-1.bin/x.worker-0.bin") {
		t.Errorf("a file under a file: %v; want it refused, named", err)
	}
}
