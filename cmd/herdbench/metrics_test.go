package main

import (
	"strings"
	"testing"
)

func TestMetricsAddrMustBeLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:9465", ":9465", "192.168.1.2:9465", "localhost"} {
		code, _, stderr := herdbench(t, "stampede", "--metrics-addr", addr, "--state-dir", t.TempDir())
		if code != exitUsage || !strings.Contains(stderr, "--metrics-addr: ") || !strings.Contains(stderr, "accepted: 127.0.0.1:PORT") {
			t.Errorf("stampede --metrics-addr %s = exit %d, stderr %q; want exit 2 naming the flag and the accepted forms", addr, code, stderr)
		}
	}
}
