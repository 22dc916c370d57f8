package main

import (
	"strings"
	"testing"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
)

// The HTTP-cache examples check out, and their dry runs name the purges
// and the flush they would send, with nothing sent.
func TestHTTPCacheExamples(t *testing.T) {
	env := append(clitest.Environ(nil), "SERVICE_PG_DSN=postgres://herdbench@127.0.0.1:1/herdbench")
	for _, c := range []struct{ file, trigger, want string }{
		{"nginx-service.yaml", "expire", "and GET /purge/items/{key} on http://127.0.0.1:8080, with the arm's selection, for each of 50 hot keys: 1, 2,"},
		{"varnish-service.yaml", "expire", "and PURGE /items/{key} (headers X-Purge) on http://127.0.0.1:6081, with the arm's selection"},
		{"varnish-service.yaml", "flush", "and BAN / (headers X-Ban-Url) on http://127.0.0.1:6081"},
	} {
		code, stdout, stderr := herdbenchEnv(t, env, "stampede", "--target", "../../examples/"+c.file, "--dry-run",
			"--trigger", c.trigger, "--rate", "500", "--state-dir", t.TempDir())
		if code != exitOK || !strings.Contains(stdout, c.want) {
			t.Errorf("dry run of examples/%s with %s = exit %d; want it to hold %q\n%s%s", c.file, c.trigger, code, c.want, stdout, stderr)
		}
	}
}
