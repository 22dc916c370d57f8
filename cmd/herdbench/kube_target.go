package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/kube"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
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

// podOutputs refuses the controller's outputs its pod cannot write (the
// problems of -o are prepare's, as the stampede finds them): a file or
// directory in the ConfigMap's mount, which is read-only. A relative path is under its
// working directory, an emptyDir it writes.
func podOutputs(opts stampedeOptions) herd.FieldErrors {
	var bad herd.FieldErrors
	outs, _ := parseOutputs(opts.Outputs, "", runFormats()) // their problems: prepare's
	for _, o := range outs {
		if readOnlyInPod(o.path) {
			bad = append(bad, &herd.FieldError{Field: "output", Elem: o.format + "=" + o.path, Msg: inConfigDir(o.path)})
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

// inPod is the subject a controller's --target names, as its pod will
// have it: a service at a URL the pods reach (svc), a target file of the
// ConfigMap, which only the pod reads (file), or, for a run without
// --target, its scenario's. It goes through the stampede's own checks
// (prepare); what only the ConfigMap's files decide is left to the pod.
type inPod struct {
	svc   *service.Kind
	file  string
	allow []string // kube's --allow-host, which the manifests hand the pod
	// a run's: the flags its command line gave, the only problems told
	// (its scenario may set the rest); nil for a stampede
	changed func(flag string) bool
	// the plan's trigger may be a file's: the ConfigMap's target file, or
	// a run's scenario
	fileTrigger bool
	refused     herd.FieldErrors // --target's own problems (controllerTarget), told first
}

var _ plan.Kind = inPod{}

// podKind is the kind resolving --target as the pod will: its problems
// (controllerTarget) are told before the plan's.
func podKind(isRun bool, fs *pflag.FlagSet, allow []string) kindOf {
	return func(_ context.Context, o stampedeOptions) (plan.Kind, error, error) {
		k := inPod{allow: allow, fileTrigger: isRun && !fs.Changed("trigger")}
		if isRun {
			k.changed = fs.Changed
			if !fs.Changed("target") { // the scenario's, read in the pod
				return k, nil, nil
			}
		}
		url, bad := controllerTarget(o.Target, allow)
		switch {
		case url != nil:
			k.svc = &service.Kind{Svc: url}
		case o.Target != "testbed" && o.Target != "":
			k.file = o.Target
			k.fileTrigger = !fs.Changed("trigger")
		}
		k.refused = bad
		return k, nil, nil
	}
}

// Plan is the service's, or g's own with the testbed's options refused
// beside a target file.
func (k inPod) Plan(g plan.Given) (plan.Plan, herd.FieldErrors) {
	switch {
	case k.svc != nil:
		return k.svc.Plan(g)
	case k.file != "":
		return g.Plan, service.TestbedOnly(g, k.file)
	}
	return g.Plan, nil
}

// Arms are the service's; a file's are the pod's to read.
func (k inPod) Arms(p plan.Plan, g plan.Given) (plan.Plan, herd.FieldErrors) {
	if k.svc != nil {
		return k.svc.Arms(p, g)
	}
	return p, nil
}

// Problems are bad's but those only the ConfigMap's files decide: a file's
// arms, the trigger a file may name (its options, what it needs of the
// target), and of a run what its command line did not give.
func (k inPod) Problems(p plan.Plan, g plan.Given, bad herd.FieldErrors) herd.FieldErrors {
	if k.svc != nil {
		bad = k.svc.Problems(p, g, bad)
	}
	if k.fileTrigger {
		bad = without(bad, idleTriggerOptions(p, g.TriggerSet, nil))
	}
	var out herd.FieldErrors
	for _, e := range bad {
		switch {
		case k.svc == nil && e.Field == "arms":
		case k.fileTrigger && errors.As(e.Err, new(*triggers.Unsupported)):
		case k.changed != nil && (e.Other != nil || e.Field != "" && !k.changed(cli.FlagOf(e.Field))):
		default:
			out = append(out, e)
		}
	}
	return append(slices.Clone(k.refused), out...)
}

// Describe is the service, or nothing yet: a file is the pod's to read.
func (k inPod) Describe() (*targets.Target, plan.Subject) {
	if k.svc != nil {
		return k.svc.Describe()
	}
	return nil, nil
}

// Hosts are the service's as the pod checks them, against the hosts the
// manifests allow it (asked once the plan, and --target, are sound).
func (k inPod) Hosts(p plan.Plan, g plan.Given) error {
	if k.svc == nil {
		return nil
	}
	g.Allow = append(slices.Clone(g.Allow), k.allow...)
	return k.svc.Hosts(p, g)
}

// Local is "": what a pod reaches is never this machine's loopback.
func (inPod) Local() string { return "" }

// Open is the pod's.
func (inPod) Open(context.Context, plan.Plan, plan.Given) (plan.Opened, error) {
	return plan.Opened{}, errors.New("the controller's subject opens in its pod")
}
