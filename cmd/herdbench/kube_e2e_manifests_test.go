package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/herdbench/herdbench/testbed/localtest"
)

// Every manifest kube/e2e/run.sh applies builds, here without a cluster:
// run.sh takes its runs and their `herdbench kube` command line from
// kube/e2e/manifests.sh, which this test runs for each run with this
// build of herdbench. A flag of theirs that herdbench comes to refuse (as
// `-o table -o json` came to be) then fails the suite, not the next
// bring-up of the node. Each run's controller Job must carry the run's
// own arguments, and its workers' Job the workers it asks for.
func TestKubeE2EManifestsBuild(t *testing.T) {
	const script = "../../kube/e2e/manifests.sh"
	env := append(os.Environ(), "HB="+localtest.Binary())
	list := exec.Command("bash", script, "--list")
	list.Env = env
	names, err := list.Output()
	if err != nil {
		t.Fatalf("bash %s --list: %v", script, err)
	}
	runs := strings.Fields(string(names))
	if len(runs) < 3 {
		t.Fatalf("%s lists %q; want run.sh's three runs at least (ok, gate, lost)", script, runs)
	}
	for _, name := range runs {
		cmd := exec.Command("bash", script, name)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("the manifests of run.sh's run %s: %v\n%s", name, err, stderr.String())
			continue
		}
		jobs := map[string]batchv1.Job{}
		for doc := range strings.SplitSeq(string(out), "\n---\n") {
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &j); err == nil && j.Kind == "Job" {
				jobs[j.Name] = j
			}
		}
		workers, controller := jobs[name+"-workers"], jobs[name+"-controller"]
		if workers.Spec.Completions == nil || *workers.Spec.Completions != 3 {
			t.Errorf("%s: no workers' Job %s-workers of 3 pods in\n%s", name, name, out)
		}
		if len(controller.Spec.Template.Spec.Containers) != 1 {
			t.Errorf("%s: no controller's Job %s-controller in\n%s", name, name, out)
			continue
		}
		args := controller.Spec.Template.Spec.Containers[0].Args
		o := slices.Index(args, "-o")
		if !slices.Contains(args, "--after") || o < 0 || o+1 == len(args) || args[o+1] != "json" || slices.Contains(args[o+1:], "-o") {
			t.Errorf("%s: the controller runs %q; want the run's own --after and the results JSON on stdout, which run.sh reads", name, args)
		}
	}
}
