package workers_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/workers"
)

// A worker with a token takes only calls that carry it: a call without
// it, or with another, is refused 401 (the first logged, each counted); a
// controller with the right one runs the arm, and one without fails it
// naming the refusal.
func TestWorkersTakeOnlyCallsWithTheirToken(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	const token = "0123456789abcdef0123456789abcdef"
	withToken := append(os.Environ(), workers.TokenEnv+"="+token)
	ws := startWorkersEnv(t, 2, withToken)
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"another token", "Bearer fedcba9876543210fedcba9876543210", http.StatusUnauthorized},
		{"the token as a password", "Basic " + token, http.StatusUnauthorized},
		{"the token", "Bearer " + token, http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodGet, ws[0].url+"/v1/clock", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET /v1/clock = %d; want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	// a controller without the token is refused by every worker
	localtest.Measures(t)
	args := []string{"stampede", "--workers", urls(ws), "--arms", "none", "--rate", "200", "--warmup", "0s", "--before", "1s",
		"--after", "1s", "--state-dir", localtest.StateDir(t), "--results-dir", t.TempDir()}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, workers.TokenEnv+"=") {
			env = append(env, e)
		}
	}
	code, _, stderr := localtest.Run(t, env, args...)
	if code == 0 || !strings.Contains(stderr, "401 Unauthorized") {
		t.Errorf("stampede --workers without the token: exit %d, %q; want a failure naming 401", code, stderr)
	}
	// with it, the arm runs from both workers
	code, stdout, stderr := localtest.Run(t, withToken, args...)
	if code != 0 || !strings.Contains(stdout, "workers   2") {
		t.Errorf("stampede --workers with the token: exit %d\n%s%s; want the arm run from 2 workers", code, stdout, stderr)
	}
	// worker 0 logged the first refusal once, and says at its exit how
	// many it refused: the readiness poll's, the three above, the
	// controller's without the token
	if err := ws[0].cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	logged, refused := 0, -1
	deadline := time.After(20 * time.Second)
	for refused < 0 {
		select {
		case l := <-ws[0].lines:
			if strings.Contains(l, "refused a call without the worker token") {
				logged++
			}
			if _, err := fmt.Sscanf(l, "refused %d calls without the worker token", &refused); err != nil {
				refused = -1
			}
		case <-deadline:
			t.Fatalf("worker 0 said nothing of its refusals within 20 s of an interrupt (logged %d)", logged)
		}
	}
	if logged != 1 || refused < 5 {
		t.Errorf("worker 0 logged %d refusals and counted %d; want one logged, 5 or more counted", logged, refused)
	}
}
