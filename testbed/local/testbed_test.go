package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/internal/machinelock"
	"github.com/herdbench/herdbench/internal/testbinary"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
)

// binary is the herdbench executable the replicas run, built by TestMain.
var binary string

// The testbed the mitigation tests share, started on first use.
var (
	sharedOnce sync.Once
	shared     *Testbed
	sharedErr  error
)

func TestMain(m *testing.M) {
	var err error
	if binary, err = testbinary.Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	if sharedMc != nil {
		sharedMc.Stop()
	}
	os.Exit(code)
}

// requireBinaries skips a test on a machine without redis-server and
// PostgreSQL, and fails it in CI, where a skipped test would prove nothing.
func requireBinaries(t *testing.T) {
	t.Helper()
	if err := CheckBinariesFor(replica.Options{}); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and the testbed cannot run: %v", err)
		}
		t.Skipf("testbed binaries missing: %v", err)
	}
}

// stateDir is a state directory for one test. Postgres may run as another
// user, so it must be world-searchable: t.TempDir's parent is not.
func stateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "herdbench-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// sharedTestbed returns the testbed the mitigation tests share: 3 replicas,
// as `testbed up` starts by default.
//
// It holds the machine (machinelock.Share) for the test: the tests on it
// herd the replicas against query costs and timeouts, so they assert what
// holds beside another package's tests, and never run beside an exclusive
// one.
func sharedTestbed(t *testing.T) *Testbed {
	t.Helper()
	requireBinaries(t)
	machinelock.Share(t)
	sharedOnce.Do(func() { shared, sharedErr = startShared(replica.Options{}) })
	if sharedErr != nil {
		t.Fatalf("start shared testbed: %v", sharedErr)
	}
	return shared
}

// startShared starts a testbed the tests share: 3 replicas with replica's
// options (zero: the defaults), 1000 items, in a state directory postgres
// can enter.
func startShared(replica replica.Options) (*Testbed, error) {
	dir, err := os.MkdirTemp("", "herdbench-shared-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	return Start(context.Background(), Config{StateDir: dir, Binary: binary, Items: 1000, Replica: replica})
}

// fleet talks to a testbed's replicas and dependencies.
type fleet struct {
	t   *testing.T
	st  testbed.Status
	rdb *redis.Client
}

func newFleet(t *testing.T, tb *Testbed) *fleet {
	st := tb.Status()
	opt, err := redis.ParseURL(st.Redis)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableIdentity = true
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return &fleet{t: t, st: st, rdb: rdb}
}

// configure sets every replica's run-time config and resets its state.
func (f *fleet) configure(body string) {
	f.t.Helper()
	for _, u := range f.st.API {
		for _, req := range []struct{ method, path, body string }{
			{http.MethodPut, "/admin/config", body},
			{http.MethodPost, "/admin/reset", ""},
		} {
			r, _ := http.NewRequest(req.method, u+req.path, strings.NewReader(req.body))
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				f.t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				f.t.Fatalf("%s %s%s %s = %s %s", req.method, u, req.path, req.body, resp.Status, b)
			}
		}
	}
}

// get requests an item from replica i and returns its X-Cache outcome, or
// "status NNN" when it was not served.
func (f *fleet) get(i int, id int64) string {
	resp, err := http.Get(fmt.Sprintf("%s/items/%d", f.st.API[i%len(f.st.API)], id))
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "status " + resp.Status
	}
	return resp.Header.Get("X-Cache")
}

// herd sends n concurrent requests for one item, released at one instant and
// spread round-robin over the replicas, and counts their outcomes.
func (f *fleet) herd(id int64, n int) map[string]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			o := f.get(i, id)
			mu.Lock()
			counts[o]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return counts
}

// metric sums a herdbench_api_* counter over the replicas' /metrics.
func (f *fleet) metric(name string) float64 {
	f.t.Helper()
	var sum float64
	for _, u := range f.st.API {
		resp, err := http.Get(u + "/metrics")
		if err != nil {
			f.t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			f.t.Fatalf("parse %s/metrics: %v", u, err)
		}
		mf, ok := mfs[name]
		if !ok {
			f.t.Fatalf("%s/metrics has no %s", u, name)
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// itemQueryCalls reads pg_stat_statements calls of the item query, the
// source the loads metric must match.
func (f *fleet) itemQueryCalls() int64 {
	f.t.Helper()
	return f.scalar(`SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
		WHERE query = $1 AND userid = (SELECT oid FROM pg_roles WHERE rolname = $2)`, api.ItemQuery, testbed.AppRole)
}

// scalar reads one whole number from Postgres itself, as its superuser.
func (f *fleet) scalar(query string, args ...any) int64 {
	f.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.st.Postgres)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// loads runs fn and returns the item loads it caused, after checking that
// the replicas' herdbench_api_loads_total agrees with pg_stat_statements.
// The replicas must have been reset (configure) before.
func (f *fleet) loads(fn func()) int {
	f.t.Helper()
	before := f.itemQueryCalls()
	fn()
	f.drain()
	calls := f.itemQueryCalls() - before
	metric := f.metric("herdbench_api_loads_total")
	if float64(calls) != metric {
		f.t.Errorf("herdbench_api_loads_total = %v; pg_stat_statements calls of the item query rose by %d", metric, calls)
	}
	return int(calls)
}

// drain waits until no replica runs a load: some strategies load in the
// background after answering.
func (f *fleet) drain() {
	f.t.Helper()
	// loads in flight and requests being served: a load's query ends (and
	// leaves the first gauge) before its request writes the cache
	deadline := time.Now().Add(10 * time.Second)
	for f.metric(admin.MetricLoadsInFlight) != 0 || f.metric(admin.MetricBusy) != 0 {
		if time.Now().After(deadline) {
			f.t.Fatal("replicas still loading after 10s")
		}
		time.Sleep(10 * time.Millisecond) // polling a gauge with a deadline
	}
}

// expire removes an item's fresh copy, as an expiry would; stale too removes
// the stale copy the lock strategy falls back on.
func (f *fleet) expire(id int64, stale bool) {
	f.t.Helper()
	keys := []string{api.ItemKey(id)}
	if stale {
		keys = append(keys, "stale:"+api.ItemKey(id))
	}
	if err := f.rdb.Del(context.Background(), keys...).Err(); err != nil {
		f.t.Fatal(err)
	}
}
