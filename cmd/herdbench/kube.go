package main

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/kube"
	"github.com/herdbench/herdbench/targets"
)

func newKubeCmd(stdout io.Writer) *cobra.Command {
	s := kube.Spec{Name: "herdbench", Namespace: "default", Workers: 3, WorkerCPU: "1"}
	c := &cobra.Command{
		Use:   "kube [flags] [-- stampede|run ARGS...]",
		Short: "Print the Kubernetes manifests of a run from several workers",
		Long: `Print the manifests that run a stampede from --workers pods: a headless
Service and an Indexed Job of workers, and the controller as a Job that
reads its target file from a ConfigMap (mounted at /config) and its
secrets from a Secret. The controller's log has the report; its exit code
follows the gates. The workers take only calls that carry the token in
the Secret --token-secret names (key token), which the controller sends:

  openssl rand -hex 32 > worker.token
  kubectl create secret generic herdbench-worker-token --from-file=token=worker.token

  herdbench kube --image REGISTRY/herdbench:TAG --configmap herd-config \
    -- stampede --target /config/target.yaml --yes | kubectl apply -f -
  kubectl logs -f job/herdbench-controller

docs/distributed.md has the whole path and what to size.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				// the ConfigMap's target file, whose hosts --allow-host
				// lists: a pod has no terminal to confirm them on
				args = []string{"stampede", "--target", kube.ConfigDir + "/target.yaml", "--yes"}
			}
			s.Args = args
			if err := checkKube(s); err != nil {
				return err
			}
			b, err := kube.Manifests(s)
			if err != nil {
				return err
			}
			_, err = stdout.Write(b)
			return err
		},
	}
	fs := c.Flags()
	fs.StringVar(&s.Name, "name", s.Name, "prefix of every object's name")
	fs.StringVar(&s.Namespace, "namespace", s.Namespace, "namespace of every object")
	fs.StringVar(&s.Image, "image", "", "herdbench's image, as the cluster pulls it (the repository's Dockerfile builds it)")
	fs.IntVar(&s.Workers, "workers", s.Workers, "worker pods")
	fs.StringVar(&s.WorkerCPU, "worker-cpu", s.WorkerCPU, "each worker's CPU request and limit (about 10,000 req/s per core)")
	fs.StringVar(&s.ConfigMap, "configmap", "", "ConfigMap holding the target file (and a scenario), mounted at /config")
	cli.NonEmptyVar(fs, &s.Secret, "secret", "", "the name of a Secret, such as herdbench-dsn; or leave it out for none", "Secret whose keys become the controller's environment (a DSN's password)")
	cli.NonEmptyVar(fs, &s.TokenSecret, "token-secret", "", "the name of a Secret with key token; or leave it out for NAME-worker-token", "Secret holding the workers' token under key token: every call to a worker carries it (default: NAME-worker-token)")
	fs.StringArrayVar(&s.AllowHosts, "allow-host", nil, "a host besides loopback the workers may send to (repeatable)")
	return c
}

// maxWorkerCPU caps --worker-cpu: a worker sends --rate's cap at about
// two cores, and no node has a million.
var maxWorkerCPU = resource.MustParse("64")

// checkKube refuses a spec Kubernetes or herdbench would refuse later,
// every problem at once: the objects' names, the image and ConfigMap, the
// workers and their CPU, the hosts, and the controller's command line as
// its own command parses it (its target file is the ConfigMap's, not
// here: what only the file decides is checked in the cluster).
func checkKube(s kube.Spec) error {
	var bad herd.FieldErrors
	for flag, v := range map[string]string{"name": s.Name, "namespace": s.Namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			bad.Add(flag, "%q: %s (accepted: a DNS label, such as herdbench)", v, errs[0])
		}
	}
	// the objects' names grow from it: NAME-controller, and the workers'
	// Service (a DNS-1035 label) whose pods are NAME-workers-INDEX
	if errs := validation.IsDNS1035Label(s.ServiceName() + "-999"); len(s.Name) <= 63 && len(errs) > 0 && validation.IsDNS1123Label(s.Name) == nil {
		bad.Add("name", "%q: the workers' Service and pods, %s-999, would not be a DNS label: %s (accepted: a name of at most %d characters that starts with a letter, such as herdbench)",
			s.Name, s.ServiceName(), errs[0], 63-len("-workers-999"))
	}
	bad = append(bad, imageProblems(s.Image)...)
	if s.ConfigMap == "" {
		bad.Add("configmap", "required (accepted: the name of a ConfigMap holding the target file)")
	}
	if s.Workers < 1 || s.Workers > 1000 {
		bad.Add("workers", "%d (accepted: 1 to 1000)", s.Workers)
	}
	// the token Secret's default is NAME-worker-token: a bad --name says so once
	for _, o := range []struct{ flag, name, kind, example string }{
		{"configmap", s.ConfigMap, "ConfigMap", "herd-config"},
		{"secret", s.Secret, "Secret", "herdbench-worker-token"},
		{"token-secret", s.TokenSecret, "Secret", "herdbench-worker-token"},
	} {
		if errs := validation.IsDNS1123Subdomain(o.name); o.name != "" && len(errs) > 0 {
			bad.Add(o.flag, "%q: %s (accepted: a %s's name, such as %s)", o.name, errs[0], o.kind, o.example)
		}
	}
	if q, err := resource.ParseQuantity(s.WorkerCPU); err != nil {
		bad.Add("worker-cpu", "%q: %v (accepted: a CPU quantity such as 1 or 500m)", s.WorkerCPU, err)
	} else if q.Sign() <= 0 || q.Cmp(maxWorkerCPU) > 0 {
		bad.Add("worker-cpu", "%q is not above 0 and at most %s (accepted: a CPU quantity such as 1 or 500m, up to %s cores)", s.WorkerCPU, maxWorkerCPU.String(), maxWorkerCPU.String())
	}
	for _, h := range s.AllowHosts {
		if err := targets.CheckHost(h); err != nil {
			bad.Add("allow-host", "%v", err)
		}
	}
	bad = append(bad, controllerProblems(s)...)
	if len(bad) > 0 {
		return cli.UsageError{Err: bad}
	}
	return nil
}
