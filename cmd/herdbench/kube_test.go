package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Bad input to kube and to --workers is refused before anything runs, exit
// 2, naming the flag and what is accepted.
func TestKubeAndWorkersRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kube", "--configmap", "c"}, "--image is required"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--workers", "0"}, "--workers 0 (accepted: 1 to 1000)"},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--name", "Herd_1"}, `--name "Herd_1"`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "testbed", "up"}, `command "testbed" (accepted: stampede or run`},
		{[]string{"kube", "--image", "i", "--configmap", "c", "--", "stampede", "--workers", "x"}, "the manifests set it"},
		{[]string{"worker", "--idle-timeout", "-1s"}, "--idle-timeout -1s is negative"},
		{[]string{"stampede", "--workers", "http://127.0.0.1:1", "--abort-on", "http.drop_rate > 50%"}, "--abort-on: stop conditions with --workers"},
		{[]string{"stampede", "--worker-count", "3"}, "--worker-count: 3 without --workers dns:NAME:PORT (accepted: with dns:NAME:PORT only, how many addresses to wait for"},
		{[]string{"stampede", "--workers", "http://127.0.0.1:1", "--worker-count", "1"}, "--worker-count: 1 without --workers dns:NAME:PORT"},
		{[]string{"stampede", "--workers", "dns:herdbench-workers"}, "--workers: dns:herdbench-workers: want a name and a port (accepted: dns:NAME:PORT such as dns:herdbench-workers:7070)"},
		{[]string{"stampede", "--workers", "dns:herdbench-workers:70000"}, `--workers: dns:herdbench-workers:70000: port "70000" is not 1 to 65535 (accepted: dns:NAME:PORT, PORT 1 to 65535)`},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("herdbench %s: exit %d, %q; want exit %d naming %q", strings.Join(tc.args, " "), code, errb.String(), exitUsage, tc.want)
		}
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"kube", "--image", "reg/herdbench:v1", "--configmap", "c", "--workers", "2"}, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "completionMode: Indexed") || !strings.Contains(out.String(), "--target\n        - /config/target.yaml") {
		t.Errorf("herdbench kube: exit %d\n%s%s; want the manifests, the controller reading /config/target.yaml", code, out.String(), errb.String())
	}
}
