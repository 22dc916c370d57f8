package triggers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
)

// LikesTable is where a write herd's likes land and are counted: the
// testbed's likes and feed, in Postgres or MariaDB (its api.LikesTable).
type LikesTable interface {
	Likes(ctx context.Context, ids []int64) (int64, error)
	LikesAndFeed(ctx context.Context, ids []int64) (likes, feed int64, err error)
	SetFollowers(ctx context.Context, ids []int64, n int) error
}

// Writes is a write herd: at T, write_burst likes land on the write_keys
// hottest items at once (POST /items/{id}/likes on the testbed), as a
// viral post's do, on top of the steady read load and of write_rate steady
// likes per second. The burst's connections are open before T, as burst's
// are. With write_restart, a part of the testbed restarts write_restart_after
// T, while the burst is in flight. With write_fanout, the written items
// have that many followers, and each applied like also inserts a feed row
// per follower: a celebrity's post, written once and fanned out to every
// follower's timeline. After the arm it reads the items' counters in
// Postgres until they hold every acknowledged write, burst and steady, and
// reports any it never found as lost, and the feed rows the likes wrote.
type Writes struct {
	Burst        int           `json:"write_burst" help:"likes sent at T, each on a connection opened before T, spread over the write_keys hottest items"`
	Keys         int           `json:"write_keys" help:"how many of the hottest items the likes go to"`
	Rate         int           `json:"write_rate" help:"steady likes per second through the whole load, beside the reads, on their own schedule (0: none)"`
	Restart      WriteRestart  `json:"write_restart" help:"the part of the testbed restarted during the burst (none: nothing)"`
	RestartAfter herd.Duration `json:"write_restart_after" help:"how long after T the write_restart begins"`
	Kill         bool          `json:"write_kill" help:"stop write_restart's processes with SIGKILL, no graceful stop: what a crash loses"`
	Fanout       int           `json:"write_fanout" help:"followers of each written item: each applied like also inserts a feed row per follower, in the statement that adds it (0: no fan-out)"`
	SettleFor    herd.Duration `json:"write_settle" help:"how long after the arm to wait for every acknowledged like to reach Postgres; what is missing then is lost"`
}

// WriteRestart is the part a write herd restarts mid-burst, or none.
type WriteRestart string

// NoRestart restarts nothing.
const NoRestart WriteRestart = "none"

// Accepted lists none and the parts.
func (WriteRestart) Accepted() []string { return append([]string{string(NoRestart)}, herd.Parts...) }

// NewWrites is a write herd with its defaults: 500 likes on 3 items, no
// steady writes, no restart (20 ms after T when one is set), up to 15 s
// for the acknowledged writes to be applied.
func NewWrites() *Writes {
	return &Writes{Burst: 500, Keys: 3, Restart: NoRestart, RestartAfter: defaultRestartAfter,
		SettleFor: herd.Duration(15 * time.Second)}
}

// Lasts is when the write_restart begins, for a plan to refuse one the
// arm's after window ends before (it would be skipped, and the arm read
// as restarted): "" with no restart. The restart's own length is the
// part's, unknown until it runs.
func (w *Writes) Lasts() (string, time.Duration) {
	if w.Restart == NoRestart || w.Restart == "" {
		return "", 0
	}
	return "write_restart_after", time.Duration(w.RestartAfter)
}

// WritesDetail is what the write herd did: the results' trigger.detail.
// Applied and Lost are read after the arm, once the service settled.
type WritesDetail struct {
	Items     []int64  `json:"items"`
	Sent      int      `json:"sent"`
	Acked     int      `json:"acked"`  // of the burst, answered 2xx: committed, queued or held, per the write strategy
	Errors    int      `json:"errors"` // of the burst, any other answer, or none
	P50MS     float64  `json:"p50_ms"` // from T to each burst write's answer
	P99MS     float64  `json:"p99_ms"`
	Restarted []string `json:"restarted,omitempty"` // what write_restart restarted during the burst
	// SteadyAcked are the steady writes answered 2xx (write_rate)
	SteadyAcked int64 `json:"steady_acked"`
	Applied     int64 `json:"applied"` // the items' counters in the database rose by this much over the arm
	Lost        int64 `json:"lost"`    // acknowledged, burst or steady, and never applied (a default gate: lost == 0)
	// Unacknowledged were applied beyond what was acknowledged: committed,
	// and the answer never arrived (a replica killed after the commit), so
	// a client that retries writes them twice
	Unacknowledged int64 `json:"unacknowledged"`
	// Followers is write_fanout, each item's followers; FeedRows the feed
	// rows the arm's applied likes inserted, counted in Postgres: Applied
	// times Followers when every like fanned out whole; -1 when Postgres
	// could not be read after the arm
	Followers int   `json:"followers"`
	FeedRows  int64 `json:"feed_rows"`
	SettleMS  int64 `json:"settle_ms"`
	before    int64
	feed0     int64
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *WritesDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[WritesDetail]{
		figure.NullWhen("items", func(d *WritesDetail) bool { return d.Items == nil }),
		figure.CountOf("sent", func(d *WritesDetail) *int { return &d.Sent }),
		figure.CountOf("acked", func(d *WritesDetail) *int { return &d.Acked }),
		figure.CountOf("errors", func(d *WritesDetail) *int { return &d.Errors }),
		figure.MillisOf("p50_ms", func(d *WritesDetail) *float64 { return &d.P50MS }),
		figure.MillisOf("p99_ms", func(d *WritesDetail) *float64 { return &d.P99MS }),
		figure.CountOf("steady_acked", func(d *WritesDetail) *int64 { return &d.SteadyAcked }),
		figure.CountOf("applied", func(d *WritesDetail) *int64 { return &d.Applied }),
		figure.CountOf("lost", func(d *WritesDetail) *int64 { return &d.Lost }),
		figure.CountOf("unacknowledged", func(d *WritesDetail) *int64 { return &d.Unacknowledged }),
		figure.CountOf("followers", func(d *WritesDetail) *int { return &d.Followers }),
		figure.CountOf("feed_rows", func(d *WritesDetail) *int64 { return &d.FeedRows }),
		figure.MillisOf("settle_ms", func(d *WritesDetail) *int64 { return &d.SettleMS }),
	})
}

var (
	_ Trigger  = (*Writes)(nil)
	_ Sender   = (*Writes)(nil)
	_ Settler  = (*Writes)(nil)
	_ Gater    = (*Writes)(nil)
	_ Preparer = (*Writes)(nil)
	_ Workload = (*Writes)(nil)
	_ Writer   = (*Writes)(nil)
	_ Requirer = (*Writes)(nil)
	_ Lasting  = (*Writes)(nil)
)

// DefaultGates fails an arm where an acknowledged write never reached
// Postgres.
func (*Writes) DefaultGates() []string { return []string{"trigger.detail.lost == 0"} }

// maxSettle caps write_settle.
const maxSettle = 10 * time.Minute

func (*Writes) Name() string { return "writes" }

// defaultRestartAfter is write_restart_after's default.
const defaultRestartAfter = herd.Duration(20 * time.Millisecond)

// WriteHerd marks the write herd: the arm reads the write statements.
func (*Writes) WriteHerd() {}

// Detail is an empty WritesDetail, into which results are read.
func (*Writes) Detail() any { return &WritesDetail{} }
func (*Writes) Describe() string {
	return "a burst of writes at T to the hottest items (POST /items/{id}/likes: a viral post's likes); after the arm, the acknowledged writes the database never got"
}

// Validate checks the options.
func (w *Writes) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if w.Burst < 1 || w.Burst > MaxBurst {
		errs.Add("write_burst", "%d out of range (accepted: 1 to %d writes)", w.Burst, MaxBurst)
	} else if limit, ok := openFiles(); ok && uint64(w.Burst)+fileHeadroom > limit {
		errs.Add("write_burst", "%d writes need as many connections, and this process may open %d files (accepted: up to %d here; raise the hard limit, ulimit -Hn)",
			w.Burst, limit, max(int(limit)-fileHeadroom, 0))
	}
	if w.SettleFor <= 0 || time.Duration(w.SettleFor) > maxSettle {
		errs.Add("write_settle", "%s out of range (accepted: more than 0s, up to %s)", w.SettleFor, maxSettle)
	}
	if w.Keys < 1 || w.Keys > 100 {
		errs.Add("write_keys", "%d out of range (accepted: 1 to 100 items)", w.Keys)
	}
	if w.Rate < 0 || w.Rate > MaxWriteRate {
		errs.Add("write_rate", "%d out of range (accepted: 0, none, to %d writes/s)", w.Rate, MaxWriteRate)
	}
	if w.Kill && w.Restart == NoRestart {
		errs.Add("write_kill", "true without write_restart (accepted: with write_restart naming a part, such as api)")
	}
	// its default is no choice; another value without a restart does nothing
	if def := defaultRestartAfter; w.RestartAfter != def && w.Restart == NoRestart {
		errs.Add("write_restart_after", "%s without write_restart, so it would do nothing (accepted: with write_restart naming a part, such as api; or left out)", w.RestartAfter)
	}
	if w.Fanout < 0 || w.Fanout > MaxFanout {
		errs.Add("write_fanout", "%d out of range (accepted: 0, none, to %d followers per item)", w.Fanout, MaxFanout)
	}
	if w.RestartAfter < 0 || time.Duration(w.RestartAfter) > 10*time.Second {
		errs.Add("write_restart_after", "%s out of range (accepted: 0s to 10s)", w.RestartAfter)
	}
	return errs
}

// MaxWriteRate caps the steady writes, MaxFanout the followers per item
// (a 2,000-like burst then writes up to 2 million feed rows).
const (
	MaxWriteRate = 10_000
	MaxFanout    = 1_000
)

// Sends is the burst's writes and, for a target's rate cap, the steady
// writes of one second.
func (w *Writes) Sends() int { return w.Burst + w.Rate }

// Requires the testbed: its write endpoint and its likes table, and the
// restarts when write_restart names a part.
func (w *Writes) Requires(c Caps) error {
	if !c.Writes {
		return errors.New("the testbed's write endpoint and likes table (a testbed, not a service)")
	}
	if w.Restart != NoRestart && !c.Restart {
		return errors.New("processes herdbench can restart, for write_restart (the testbed)")
	}
	if w.Restart != NoRestart {
		if err := requirePart(c, string(w.Restart)); err != nil {
			return &OptionNeeds{Option: "write_restart", Err: err}
		}
	}
	return nil
}

func (w *Writes) items(env Env) ([]int64, error) {
	var ids []int64
	for _, k := range env.HotKeys[:min(w.Keys, len(env.HotKeys))] {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("hot key %q is not an item id", k)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (w *Writes) Plan(env Env) string {
	ids, _ := w.items(env)
	plan := fmt.Sprintf("open %d connections before T, POST %d likes at T to items %v through %d endpoints", w.Burst, w.Burst, ids, len(env.API))
	if w.Rate > 0 {
		plan += fmt.Sprintf(", and %d likes/s to them through the whole load", w.Rate)
	}
	if w.Fanout > 0 {
		plan += fmt.Sprintf(", each like fanned out to the item's %d followers (a feed row each)", w.Fanout)
	}
	if w.Restart != NoRestart {
		how := "restart"
		if w.Kill {
			how = "kill (SIGKILL) and start again"
		}
		plan += fmt.Sprintf(", %s the testbed's %s %s after T", how, w.Restart, w.RestartAfter)
	}
	return plan + fmt.Sprintf("; then read their counters in the database until each acknowledged like is there (up to %s)", w.SettleFor)
}

// Steady is the steady likes: write_rate per second to the written items.
func (w *Writes) Steady(env Env) Steady {
	keys := env.HotKeys[:min(w.Keys, len(env.HotKeys))]
	return Steady{Rate: w.Rate, Method: http.MethodPost, Path: "/items/{key}/likes", Keys: keys}
}

// Fire prepares the writes and sends them at once; a run prepares them
// before the load instead.
func (w *Writes) Fire(ctx context.Context, env Env) (Fired, error) {
	a, err := w.Prepare(ctx, env)
	if err != nil {
		return Fired{}, err
	}
	defer a.Close()
	return a.Fire(ctx, env)
}

// Prepare reads the items' counters before any write of the arm, steady
// or burst, and opens one connection per write of the burst with its
// request serialized, each with its own write id.
func (w *Writes) Prepare(ctx context.Context, env Env) (Armed, error) {
	ids, err := w.items(env)
	if err != nil || len(ids) == 0 || len(env.API) == 0 {
		return nil, fmt.Errorf("writes: no items or endpoints (%v)", err)
	}
	if env.Likes == nil {
		return nil, errors.New("writes: the testbed's likes table is not open")
	}
	d := &WritesDetail{Items: ids, Sent: w.Burst, Followers: w.Fanout}
	if err = env.Likes.SetFollowers(ctx, ids, w.Fanout); err == nil {
		d.before, d.feed0, err = env.Likes.LikesAndFeed(ctx, ids)
	}
	if err != nil {
		return nil, fmt.Errorf("writes: prepare the likes and feed tables: %w (a testbed seeded before the writes, or their fan-out, existed lacks them: testbed down, then up)", err)
	}
	var n atomic.Int64
	run := time.Now().UnixNano()
	post := func(ctx context.Context, base, key string) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/items/"+key+"/likes", nil)
		if err == nil {
			req.Header.Set("X-Herdbench-Write-Id", fmt.Sprintf("w%d-%d", run, n.Add(1)))
		}
		return req, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = strconv.FormatInt(id, 10)
	}
	r, err := openRelease(ctx, "writes", w.Burst, env.API, keys, post)
	if err != nil {
		return nil, err
	}
	return &armedWrites{w: w, r: r, d: d}, nil
}

// armedWrites is a write herd whose connections are open, waiting for T.
type armedWrites struct {
	w *Writes
	r *release
	d *WritesDetail
}

// Fire releases the writes, restarts write_restart during them, and counts
// what was acknowledged.
func (a *armedWrites) Fire(ctx context.Context, env Env) (Fired, error) {
	defer a.r.Close()
	restarted := make(chan error, 1)
	if a.w.Restart == NoRestart {
		restarted <- nil
	} else {
		go func() {
			wait(ctx, time.Duration(a.w.RestartAfter))
			if ctx.Err() != nil {
				restarted <- nil // the arm ended first: nothing to restart
				return
			}
			if env.Restarter == nil {
				restarted <- errors.New("the target cannot restart its processes")
				return
			}
			var err error
			if k, ok := env.Restarter.(Killer); a.w.Kill && ok {
				a.d.Restarted, err = k.Kill(ctx, string(a.w.Restart))
			} else if a.w.Kill {
				err = errors.New("the target cannot kill its processes")
			} else {
				a.d.Restarted, err = env.Restarter.Restart(ctx, string(a.w.Restart), false)
			}
			restarted <- err
		}()
	}
	a.r.send(ctx)
	if err := <-restarted; err != nil {
		return Fired{}, fmt.Errorf("writes: restart %s: %w", a.w.Restart, err)
	}
	d := a.d
	var took []time.Duration
	for _, c := range a.r.clients {
		if c.ok {
			d.Acked++
			took = append(took, c.took)
		}
	}
	d.Errors = d.Sent - d.Acked
	if len(took) > 0 {
		slices.Sort(took)
		d.P50MS = float64(took[len(took)/2].Microseconds()) / 1000
		d.P99MS = float64(took[min(len(took)-1, len(took)*99/100)].Microseconds()) / 1000
	}
	return Fired{Detail: d, Burst: a.r.result(), Ended: time.Now()}, nil
}

// Close closes the connections when the writes never fired.
func (a *armedWrites) Close() { a.r.Close() }

// Settle reads the items' counters until they rose by every acknowledged
// write, or write_settle passes: what is missing then is lost.
func (w *Writes) Settle(ctx context.Context, env Env, detail any, steadyOK int64) any {
	d, ok := detail.(*WritesDetail)
	if !ok {
		return detail
	}
	d.SteadyAcked = steadyOK
	acked := int64(d.Acked) + steadyOK
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, time.Duration(w.SettleFor))
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	read := func() {
		if n, err := env.Likes.Likes(wctx, d.Items); err == nil {
			d.Applied = n - d.before
		}
	}
	for read(); d.Applied < acked && wctx.Err() == nil; read() {
		select {
		case <-wctx.Done():
		case <-tick.C:
		}
	}
	// the final figures in one snapshot, also when the wait gave up
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	d.FeedRows = -1
	if n, f, err := env.Likes.LikesAndFeed(rctx, d.Items); err == nil {
		d.Applied, d.FeedRows = n-d.before, f-d.feed0
	}
	d.Lost = max(acked-d.Applied, 0)
	d.Unacknowledged = max(d.Applied-acked, 0)
	d.SettleMS = time.Since(start).Milliseconds()
	return d
}
