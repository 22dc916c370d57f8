package onservice_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/service"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// A service that answers 404 for the keys it does not have (the odd keys
// past its 10 hot ones; here a real HTTP server counting its own answers)
// answers every request quickly: by default its 404s are
// http.status_4xx, no drop, and the arm reads as serving. A target file
// whose fail_statuses names 404 counts them as failures
// (http.errors.other, a drop): its before window then carries under 90%
// of what it offered, and the arm is overloaded. Each run's 404s are at
// most the server's, and its 2xx and 404s add up to its requests from T.
func TestFailStatusesCountA404AsAFailure(t *testing.T) {
	t.Parallel()
	var ok, missing atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/items/")); err == nil && k > 10 && k%2 == 1 {
			missing.Add(1)
			http.NotFound(w, r)
			return
		}
		ok.Add(1)
		fmt.Fprintln(w, "ok")
	})}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	localtest.Measures(t)

	for _, c := range []struct {
		file    string
		verdict string
	}{{"", result.Recovered}, {"fail_statuses: [404]\n", result.Overloaded}} {
		svc := openService(t, fmt.Sprintf("name: a service of half its keys\nendpoints: [\"http://%s\"]\nrequest: {path: \"/items/{key}\"}\nkeys: {zipf: {from: 1, to: 100, s: 1.1}}\n%s", ln.Addr(), c.file), nil)
		p := plan.Plan{Arms: []arm.Arm{{Name: "base"}}, Trigger: "burst", Keys: 100, HotKeys: 10, Zipf: 1.1, Rate: 100, Clients: 10,
			Timeout: herd.Duration(time.Second), Warmup: herd.Duration(200 * time.Millisecond),
			Before: herd.Duration(time.Second), After: herd.Duration(2 * time.Second), Seed: 5}
		ok0, missing0 := ok.Load(), missing.Load()
		rep, err := Run(context.Background(), p, Env{Target: svc, Subject: &service.Subject{Target: svc}})
		if err != nil {
			t.Fatal(err)
		}
		a := rep.Arms[0]
		h, served, notFound := a.HTTP, ok.Load()-ok0, missing.Load()-missing0
		failures, answers := h.Errors.Other, h.Status4xx
		if c.file == "" {
			failures, answers = answers, failures
		}
		t.Logf("%q: %d requests from T, %d ok, %d status_4xx, %d errors.other, drop %.4f, %s; the server: %d 2xx, %d 404 in all",
			c.file, h.Requests, h.OK, h.Status4xx, h.Errors.Other, h.DropRate, a.Verdict, served, notFound)
		if c.file == "" && (h.Status4xx == 0 || h.Errors.Other != 0 || h.DropRate != 0) ||
			c.file != "" && (h.Errors.Other == 0 || h.Status4xx != 0 || h.DropRate < float64(h.Errors.Other)/float64(h.Requests)) {
			t.Errorf("%q: status_4xx %d, errors.other %d, drop rate %v of %d requests; want the 404s %s", c.file, h.Status4xx, h.Errors.Other, h.DropRate, h.Requests,
				map[bool]string{true: "as answers, no drop", false: "as failures, dropped"}[c.file == ""])
		}
		if failures+answers > notFound || h.OK > served || h.OK+failures+answers != h.Requests {
			t.Errorf("%q: %d ok and %d 404s of %d requests from T; want them within the server's own %d 2xx and %d 404s, and adding up", c.file, h.OK, failures+answers, h.Requests, served, notFound)
		}
		if a.Verdict != c.verdict {
			t.Errorf("%q: verdict %s; want %s", c.file, a.Verdict, c.verdict)
		}
	}
}
