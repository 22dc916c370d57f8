// Package kube writes the Kubernetes manifests that launch a distributed
// run: a headless Service and an Indexed Job of worker pods, and the
// controller as a Job that reads its target file from a ConfigMap and its
// secrets from a Secret. Kubernetes schedules, restarts nothing, and keeps
// the logs; herdbench keeps no cluster of its own.
package kube

import (
	"bytes"
	"cmp"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// WorkerPort is the port the workers serve their API on.
const WorkerPort = 7070

// ConfigDir is where the controller's pod mounts the ConfigMap: its
// target file and scenario are read from there.
const ConfigDir = "/config"

// WorkDir is the controller's working directory, an emptyDir: its results
// are written there (ConfigDir is read-only).
const WorkDir = "/work"

// Spec is one distributed run.
type Spec struct {
	Name      string // prefix of every object
	Namespace string // where they go
	Image     string // herdbench's image
	Workers   int    // worker pods
	WorkerCPU string // each worker's CPU request and limit, such as "1"
	ConfigMap string // holds target.yaml (and a scenario), mounted at /config
	Secret    string // its keys become the controller's environment; "" for none
	// TokenSecret holds the worker API's token under key "token": the
	// workers require it on every call, the controller sends it ("":
	// NAME-worker-token).
	TokenSecret string
	AllowHosts  []string // hosts beyond loopback the workers may send to
	Args        []string // the controller's command line: stampede or run, with its flags
}

// TokenKey is the key of the token in TokenSecret.
const TokenKey = "token"

// TokenSecretName is the Secret the worker token is read from.
func (s Spec) TokenSecretName() string { return cmp.Or(s.TokenSecret, s.Name+"-worker-token") }

// tokenEnv is the worker token in the environment both sides read it from
// (workers.TokenEnv), from the token Secret.
func (s Spec) tokenEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: "HERDBENCH_WORKER_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: s.TokenSecretName()}, Key: TokenKey}}}
}

// ServiceName is the headless Service that names the worker pods.
func (s Spec) ServiceName() string { return s.Name + "-workers" }

// WorkersAddr is where the controller finds the workers: every address of
// the headless Service.
func (s Spec) WorkersAddr() string {
	return fmt.Sprintf("dns:%s.%s.svc:%d", s.ServiceName(), s.Namespace, WorkerPort)
}

// Manifests are the objects of s, as YAML documents.
func Manifests(s Spec) ([]byte, error) {
	var b bytes.Buffer
	for i, obj := range []any{s.service(), s.workerJob(), s.controllerJob()} {
		y, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

func (s Spec) labels(role string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "herdbench", "app.kubernetes.io/instance": s.Name, "app.kubernetes.io/component": role}
}

func (s Spec) meta(name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: s.labels(role)}
}

func (s Spec) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: s.meta(s.ServiceName(), "worker"),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, // headless: its name resolves to every ready worker
			Selector:  s.labels("worker"),
			Ports:     []corev1.ServicePort{{Name: "api", Port: WorkerPort, TargetPort: intstr.FromInt32(WorkerPort)}},
		},
	}
}

func (s Spec) workerJob() *batchv1.Job {
	args := []string{"worker", "--listen", ":" + strconv.Itoa(WorkerPort), "--idle-timeout", "10m"}
	for _, h := range s.AllowHosts {
		args = append(args, "--allow-host", h)
	}
	n := int32(s.Workers)
	indexed := batchv1.IndexedCompletion
	cpu := resource.MustParse(s.WorkerCPU)
	c := corev1.Container{
		Name: "worker", Image: s.Image, Args: args,
		// -o vegeta: each worker writes its own results under its working
		// directory, an emptyDir kept until the pod is deleted
		WorkingDir: WorkDir, VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: WorkDir}},
		Ports: []corev1.ContainerPort{{Name: "api", ContainerPort: WorkerPort}},
		Env:   []corev1.EnvVar{s.tokenEnv()}, // every call must carry it
		// the Service lists a worker once it listens: the controller waits
		// for all of them (a TCP probe: the API's calls need the token)
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(WorkerPort)}}, PeriodSeconds: 2},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: cpu},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu},
		},
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: s.meta(s.Name+"-workers", "worker"),
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed, // each pod gets JOB_COMPLETION_INDEX
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   new(int32(0)), // a restarted worker never rejoins a herd in flight
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.labels("worker")},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
					Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
			},
		},
	}
}

func (s Spec) controllerJob() *batchv1.Job {
	args := append([]string{}, s.Args...)
	args = append(args, "--workers", s.WorkersAddr(), "--worker-count", strconv.Itoa(s.Workers))
	for _, h := range s.AllowHosts {
		args = append(args, "--allow-host", h)
	}
	c := corev1.Container{
		// results are written under WorkDir, the target read from ConfigDir
		Name: "controller", Image: s.Image, Args: args, WorkingDir: WorkDir,
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: ConfigDir, ReadOnly: true}, {Name: "work", MountPath: WorkDir}},
		Env:          []corev1.EnvVar{{Name: "CI", Value: "true"}, s.tokenEnv()}, // CI: no live line in a log
	}
	if s.Secret != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.Secret}}}}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: s.meta(s.Name+"-controller", "controller"),
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)), // one run: its exit code is the gates'
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.labels("controller")},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{c},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{
							ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.ConfigMap}}}},
						{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}
