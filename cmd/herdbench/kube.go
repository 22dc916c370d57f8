package main

import (
	"io"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/herdbench/herdbench/kube"
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
    -- stampede --target /config/target.yaml | kubectl apply -f -
  kubectl logs -f job/herdbench-controller

docs/distributed.md has the whole path and what to size.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"stampede", "--target", "/config/target.yaml"}
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
	nonEmptyVar(fs, &s.Secret, "secret", "", "the name of a Secret, such as herdbench-dsn; or leave it out for none", "Secret whose keys become the controller's environment (a DSN's password)")
	nonEmptyVar(fs, &s.TokenSecret, "token-secret", "", "the name of a Secret with key token; or leave it out for NAME-worker-token", "Secret holding the workers' token under key token: every call to a worker carries it (default: NAME-worker-token)")
	fs.StringArrayVar(&s.AllowHosts, "allow-host", nil, "a host besides loopback the workers may send to (repeatable)")
	return c
}

// checkKube refuses a spec Kubernetes or herdbench would refuse later.
func checkKube(s kube.Spec) error {
	for flag, v := range map[string]string{"--name": s.Name, "--namespace": s.Namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return usageErrorf("%s %q: %s (accepted: a DNS label, such as herdbench)", flag, v, errs[0])
		}
	}
	switch {
	case s.Image == "":
		return usageErrorf("--image is required (accepted: the herdbench image the cluster pulls, such as registry.example/herdbench:v1)")
	case s.ConfigMap == "":
		return usageErrorf("--configmap is required (accepted: the name of a ConfigMap holding the target file)")
	case s.Workers < 1 || s.Workers > 1000:
		return usageErrorf("--workers %d (accepted: 1 to 1000)", s.Workers)
	case s.Args[0] != "stampede" && s.Args[0] != "run":
		return usageErrorf("the controller's command %q (accepted: stampede or run, after --)", s.Args[0])
	case slices.Contains(s.Args, "--workers") || slices.Contains(s.Args, "--worker-count"):
		return usageErrorf("--workers after --: the manifests set it to the workers' Service (accepted: kube --workers N)")
	}
	if errs := validation.IsDNS1123Subdomain(s.TokenSecretName()); len(errs) > 0 {
		return usageErrorf("--token-secret %q: %s (accepted: a Secret's name, such as herdbench-worker-token)", s.TokenSecretName(), errs[0])
	}
	if _, err := resource.ParseQuantity(s.WorkerCPU); err != nil {
		return usageErrorf("--worker-cpu %q: %v (accepted: a CPU quantity such as 1 or 500m)", s.WorkerCPU, err)
	}
	return nil
}
