package main

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
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
// own arguments, and its workers' Job the workers it asks for; herd-wide's
// workers fill the node's CPU, at least 6 of them.
// nodeMilliCPU is the CPU the e2e node's scheduler places pods in: the
// machine's 2 cores, the kubelet reserving none (kube/e2e/node.sh).
const nodeMilliCPU = 2000

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
	wide := false
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
		if len(controller.Spec.Template.Spec.Containers) != 1 || len(workers.Spec.Template.Spec.Containers) != 1 || workers.Spec.Completions == nil {
			t.Errorf("%s: no controller's Job %s-controller or workers' Job %s-workers in\n%s", name, name, name, out)
			continue
		}
		args := controller.Spec.Template.Spec.Containers[0].Args
		pods := int(*workers.Spec.Completions)
		if c := slices.Index(args, "--worker-count"); c < 0 || c+1 == len(args) || args[c+1] != strconv.Itoa(pods) {
			t.Errorf("%s: the controller runs %q; want --worker-count %d, the workers' Job's pods", name, args, pods)
		}
		cpu := workers.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		if name == "herd-wide" {
			wide = true
			if pods < 6 || int64(pods)*cpu > nodeMilliCPU || int64(pods+1)*cpu <= nodeMilliCPU {
				t.Errorf("herd-wide: %d workers of %dm CPU; want as many as the node's %dm hold, at least 6 (#51.5)", pods, cpu, nodeMilliCPU)
			}
		} else if pods != 3 {
			t.Errorf("%s: %d worker pods; want 3, as run.sh checks", name, pods)
		}
		o := slices.Index(args, "-o")
		if !slices.Contains(args, "--after") || o < 0 || o+1 == len(args) || args[o+1] != "json" || slices.Contains(args[o+1:], "-o") {
			t.Errorf("%s: the controller runs %q; want the run's own --after and the results JSON on stdout, which run.sh reads", name, args)
		}
	}
	if !wide {
		t.Errorf("%s lists %q; want herd-wide, the run of as many worker pods as the node holds", script, runs)
	}
}
