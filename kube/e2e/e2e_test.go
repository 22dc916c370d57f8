// Package e2e runs herdbench kube's manifests on a real single-node
// Kubernetes that node.sh builds and starts on this machine: run.sh applies
// them unchanged and checks the Jobs' exit codes, the report, the request
// totals and that nothing of a run is left on the node.
//
// It needs root, Docker, and about 20 minutes for the first build, so it is
// not part of `go test ./...`: set HERDBENCH_KUBE_E2E=1 to run it.
package e2e

import (
	"os"
	"os/exec"
	"testing"
)

func TestKubeManifestsOnARealNode(t *testing.T) {
	if os.Getenv("HERDBENCH_KUBE_E2E") == "" {
		t.Skip("HERDBENCH_KUBE_E2E unset: the node's build and bring-up take minutes (bash kube/e2e/run.sh runs the same)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("HERDBENCH_KUBE_E2E set but not root: the node runs a kubelet")
	}
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(), "OUT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("bash kube/e2e/run.sh:\n%s", out)
	if err != nil {
		t.Fatalf("bash kube/e2e/run.sh: %v", err)
	}
}
