package kube

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/yaml"
)

var spec = Spec{Name: "herd", Namespace: "staging", Image: "registry.example/herdbench:v1", Workers: 4, WorkerCPU: "1",
	ConfigMap: "herd-config", Secret: "herd-secrets", AllowHosts: []string{"api.staging.internal"},
	Args: []string{"stampede", "--target", "/config/target.yaml", "--rate", "40000"}}

// The manifests decode strictly into Kubernetes' own types: a misspelt or
// misplaced field fails.
func TestManifestsDecodeStrictly(t *testing.T) {
	b, err := Manifests(spec)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte("\n---\n"))
	if len(docs) != 3 {
		t.Fatalf("%d documents; want 3 (Service, workers' Job, controller's Job)\n%s", len(docs), b)
	}
	var svc corev1.Service
	var workers, controller batchv1.Job
	for i, obj := range []any{&svc, &workers, &controller} {
		if err := yaml.UnmarshalStrict(docs[i], obj); err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i, err, docs[i])
		}
	}
	if svc.Kind != "Service" || svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Name != "herd-workers" || svc.Namespace != "staging" {
		t.Errorf("service: %s %s/%s clusterIP %q; want the headless Service staging/herd-workers", svc.Kind, svc.Namespace, svc.Name, svc.Spec.ClusterIP)
	}
	ws := workers.Spec
	if workers.Kind != "Job" || ws.CompletionMode == nil || *ws.CompletionMode != batchv1.IndexedCompletion || *ws.Completions != 4 || *ws.Parallelism != 4 {
		t.Errorf("workers' job: %+v; want an Indexed Job of 4 pods at once", ws)
	}
	for k, v := range svc.Spec.Selector {
		if ws.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s; the worker pods are labelled %v", k, v, ws.Template.Labels)
		}
	}
	wargs := strings.Join(ws.Template.Spec.Containers[0].Args, " ")
	if !strings.HasPrefix(wargs, "worker --listen :7070") || !strings.Contains(wargs, "--allow-host api.staging.internal") {
		t.Errorf("worker args %q; want worker --listen :7070 ... --allow-host api.staging.internal", wargs)
	}
	cargs := controller.Spec.Template.Spec.Containers[0].Args
	if !slices.Equal(cargs[:4], spec.Args[:4]) || !strings.Contains(strings.Join(cargs, " "), "--workers dns:herd-workers.staging.svc:7070 --worker-count 4") {
		t.Errorf("controller args %q; want the run's, then --workers dns:herd-workers.staging.svc:7070 --worker-count 4", cargs)
	}
	if e := controller.Spec.Template.Spec.Containers[0].EnvFrom; len(e) != 1 || e[0].SecretRef.Name != "herd-secrets" {
		t.Errorf("controller env from %+v; want the Secret herd-secrets", e)
	}
	// the workers require the token and the controller sends it: both from
	// the token Secret, never in the manifests; the readiness probe calls
	// no API (TCP)
	wc, cc := ws.Template.Spec.Containers[0], controller.Spec.Template.Spec.Containers[0]
	for _, c := range []corev1.Container{wc, cc} {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HERDBENCH_WORKER_TOKEN" })
		if i < 0 || c.Env[i].Value != "" || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil ||
			c.Env[i].ValueFrom.SecretKeyRef.Name != "herd-worker-token" || c.Env[i].ValueFrom.SecretKeyRef.Key != "token" {
			t.Errorf("%s env %+v; want HERDBENCH_WORKER_TOKEN from the Secret herd-worker-token, key token", c.Name, c.Env)
		}
	}
	if p := wc.ReadinessProbe; p == nil || p.TCPSocket == nil || p.HTTPGet != nil {
		t.Errorf("worker readiness %+v; want a TCP probe (the API's calls need the token)", p)
	}
	// -o vegeta: a worker writes its own file under its working directory
	vols := ws.Template.Spec.Volumes
	if wc.WorkingDir != WorkDir || len(wc.VolumeMounts) != 1 || wc.VolumeMounts[0].MountPath != WorkDir || wc.VolumeMounts[0].ReadOnly ||
		len(vols) != 1 || vols[0].Name != wc.VolumeMounts[0].Name || vols[0].EmptyDir == nil {
		t.Errorf("worker working dir %q, mounts %+v, volumes %+v; want %s, a writable emptyDir", wc.WorkingDir, wc.VolumeMounts, vols, WorkDir)
	}
	// and the check can fail
	bad := bytes.Replace(docs[1], []byte("completionMode:"), []byte("completionMod:"), 1)
	if err := yaml.UnmarshalStrict(bad, &batchv1.Job{}); err == nil {
		t.Errorf("a misspelt field decoded strictly; want it refused")
	}

	// client-go's own schema of the built-in types (what server-side apply
	// checks against) takes each object as it is
	scheme := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(scheme), batchv1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	tc := applyconfigurations.NewTypeConverter(scheme)
	for _, obj := range []runtime.Object{&svc, &workers, &controller} {
		if _, err := tc.ObjectToTyped(obj); err != nil {
			t.Errorf("%s: not valid against client-go's schema: %v", obj.GetObjectKind().GroupVersionKind().Kind, err)
		}
	}
	// a duplicate key in a list keyed by name is one the schema refuses
	dup := controller.DeepCopy()
	dup.Spec.Template.Spec.Volumes = append(dup.Spec.Template.Spec.Volumes, dup.Spec.Template.Spec.Volumes[0])
	if _, err := tc.ObjectToTyped(dup); err == nil {
		t.Errorf("two volumes named %q passed client-go's schema; want them refused", dup.Spec.Template.Spec.Volumes[0].Name)
	}
}
