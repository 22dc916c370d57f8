package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/api"
)

// A load whose client gave up runs on when detached (the default): Postgres
// completes it (pg_stat_statements) and the next request hits the cache it
// filled. Canceled, it dies with its request: Postgres completes none of
// it, the replica counts a load error, and the next request misses.
func TestAbandonedLoadsRunOnOrDieWithTheirRequest(t *testing.T) {
	f := newFleet(t, sharedTestbed(t))
	for i, c := range []struct {
		mode  string
		calls int64  // item queries Postgres completed for the abandoned request
		next  string // the next request's outcome
	}{
		{api.AbandonDetached, 1, api.OutcomeHit},
		{api.AbandonCanceled, 0, api.OutcomeMiss},
	} {
		id := int64(31 + i)
		f.configure(`{"strategy":"none","query_cost":"400ms","abandoned_load":"` + c.mode + `"}`)
		f.expire(id, true)
		calls, errs := f.itemQueryCalls(), f.metric("herdbench_api_load_errors_total")
		// a client that gives up long before the 400 ms query ends
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/items/%d", f.st.API[0], id), nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: the request answered %s within 50 ms; want it given up", c.mode, resp.Status)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: the request failed with %v; want its client's deadline", c.mode, err)
		}
		f.drain()
		gotCalls := f.itemQueryCalls() - calls
		gotErrs := f.metric("herdbench_api_load_errors_total") - errs
		if gotCalls != c.calls || (c.calls == 0) != (gotErrs == 1) {
			t.Errorf("%s: Postgres completed %d item queries, the replica counted %v load errors; want %d, and an error only when canceled",
				c.mode, gotCalls, gotErrs, c.calls)
		}
		if got := f.get(0, id); got != c.next {
			t.Errorf("%s: the next request was a %s; want a %s", c.mode, got, c.next)
		}
	}
}
