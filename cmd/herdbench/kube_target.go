package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/distribution/reference"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/kube"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/workers"
)

// controllerTarget refuses a controller's --target its pod cannot reach,
// and returns it when it is a URL (a file is read in the pod):
// none or testbed (the image holds no testbed's servers), a file outside
// the ConfigMap's mount, a loopback URL (in a pod, the pod itself), or a
// URL whose host --allow-host does not list (the controller and workers
// would refuse it in the cluster, after the Jobs were created).
func controllerTarget(target string, allow []string) (*targets.Target, herd.FieldErrors) {
	var bad herd.FieldErrors
	var url *targets.Target
	switch {
	case target == "" || target == "testbed":
		bad.Add("", "after --: stampede without --target would start the local testbed in the controller's pod, whose image holds none of its servers (accepted: --target %s/FILE from --configmap, or the service's URL as the pods reach it)", kube.ConfigDir)
	case strings.Contains(target, "://"):
		tg, err := targets.FromURL(target)
		if err != nil {
			bad.Add("", "after --: --target: %v", err)
			break
		}
		url = tg
		for host := range tg.Hosts {
			switch {
			case targets.Loopback(host):
				bad.Add("", "after --: --target %s: loopback, which in a pod is the pod itself (accepted: the service's name or address as the pods reach it, listed with --allow-host)", tg.Name)
			case !targets.Allowed(host, allow):
				bad.Add("allow-host", "%s, the host of --target after --, is not listed: the workers would refuse it (accepted: --allow-host %s)", host, host)
			}
		}
	default:
		bad = append(bad, inConfigMap("--target", target)...)
	}
	return url, bad
}

// inConfigMap refuses a file the controller reads that is not in the
// ConfigMap's mount, the only files its pod has: a file right in it, as
// the ConfigMap's keys make them, once the path is cleaned (../ out of
// it, or the mount itself, are not).
func inConfigMap(what, p string) herd.FieldErrors {
	var bad herd.FieldErrors
	clean := path.Clean(p)
	if path.Dir(clean) == kube.ConfigDir && !strings.HasSuffix(p, "/") {
		return nil
	}
	if clean != p && p != "" {
		p += " (" + clean + ")"
	}
	bad.Add("", "after --: %s %s is not in the ConfigMap, the only files the controller's pod has (accepted: %s/FILE, FILE one of the keys of --configmap, which is mounted there)", what, p, kube.ConfigDir)
	return bad
}

// podOutputs refuses the controller's outputs its pod cannot write, with
// the problems of -o as the stampede finds them: a file or directory in
// the ConfigMap's mount, which is read-only. A relative path is under its
// working directory, an emptyDir it writes.
func podOutputs(opts stampedeOptions) herd.FieldErrors {
	outs, err := parseOutputs(opts.Outputs, "", runFormats())
	bad := append(herd.Fields(err), checkVegeta(outs)...)
	for _, o := range outs {
		if readOnlyInPod(o.path) {
			bad = append(bad, &herd.FieldError{Field: "output", Elem: o.format + "=" + o.path, Msg: inConfigDir(o.path)})
		}
		if o.format == vegetaFormat && o.path != "" && workers.CheckVegetaFile(o.path) != nil { // the worker pods write it
			bad.Add("output", "%v", workers.CheckVegetaFile(o.path))
		}
	}
	for _, f := range []struct{ field, path string }{{"json", opts.JSONFile}, {"results_dir", opts.ResultsDir}} {
		if readOnlyInPod(f.path) {
			bad.Add(f.field, "%s", inConfigDir(f.path))
		}
	}
	return bad
}

// readOnlyInPod says whether the controller's pod resolves p into the
// ConfigMap's read-only mount.
func readOnlyInPod(p string) bool {
	if p == "" {
		return false
	}
	if !path.IsAbs(p) {
		p = path.Join(kube.WorkDir, p)
	}
	p = path.Clean(p)
	return p == kube.ConfigDir || strings.HasPrefix(p, kube.ConfigDir+"/")
}

// inConfigDir is the problem of an output at p, in the ConfigMap's mount.
func inConfigDir(p string) string {
	base := path.Base(p)
	return fmt.Sprintf("%s is in the ConfigMap's mount, %s, which is read-only (accepted: a path under %s, the controller's working directory, an emptyDir, such as %s or %s)",
		p, kube.ConfigDir, kube.WorkDir, path.Join(kube.WorkDir, base), base)
}

// imageProblems refuses an --image the cluster could not pull by that
// name, as its container runtime parses a reference (distribution's
// reference package): no whitespace, a lower-case repository path, an
// optional :tag and @digest.
func imageProblems(image string) herd.FieldErrors {
	var bad herd.FieldErrors
	if image == "" {
		bad.Add("image", "required (accepted: the herdbench image the cluster pulls, such as registry.example/herdbench:v1)")
	} else if _, err := reference.ParseNormalizedNamed(image); err != nil {
		bad.Add("image", "%q: %v (accepted: the herdbench image the cluster pulls, [REGISTRY/]REPOSITORY[:TAG][@DIGEST] with a lower-case repository, such as registry.example/herdbench:v1)", image, err)
	}
	return bad
}
