package triggers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Writes is a write herd: at T, write_burst likes land on the write_keys
// hottest items at once (POST /items/{id}/likes on the testbed), as a
// viral post's do, on top of the steady read load. It counts what the
// service acknowledged; after the arm it reads the items' counters in
// Postgres until they hold every acknowledged write, and reports any it
// never found as lost.
type Writes struct {
	Burst int `json:"write_burst" help:"likes sent at T, spread over the write_keys hottest items"`
	Keys  int `json:"write_keys" help:"how many of the hottest items the likes go to"`
}

// NewWrites is a write herd with its defaults: 500 likes on 3 items.
func NewWrites() *Writes { return &Writes{Burst: 500, Keys: 3} }

// WritesDetail is what the write herd did: the results' trigger.detail.
// Applied and Lost are read after the arm, once the service settled.
type WritesDetail struct {
	Items    []int64 `json:"items"`
	Sent     int     `json:"sent"`
	Acked    int     `json:"acked"`  // answered 2xx: committed, queued or held, per the write strategy
	Errors   int     `json:"errors"` // any other answer, or none
	P50MS    float64 `json:"p50_ms"` // from T to each write's answer
	P99MS    float64 `json:"p99_ms"`
	Applied  int64   `json:"applied"` // the items' counters in Postgres rose by this much
	Lost     int64   `json:"lost"`    // acknowledged and never applied (a default gate: lost == 0)
	SettleMS int64   `json:"settle_ms"`
	before   int64
}

var (
	_ Trigger = (*Writes)(nil)
	_ Sender  = (*Writes)(nil)
	_ Settler = (*Writes)(nil)
	_ Gater   = (*Writes)(nil)
)

// DefaultGates fails an arm where an acknowledged write never reached
// Postgres.
func (*Writes) DefaultGates() []string { return []string{"trigger.detail.lost == 0"} }

// settleTimeout bounds the wait for the acknowledged writes to be applied
// after the arm.
const settleTimeout = 15 * time.Second

func (*Writes) Name() string { return "writes" }
func (*Writes) Describe() string {
	return "a burst of writes at T to the hottest items (POST /items/{id}/likes: a viral post's likes); after the arm, the acknowledged writes Postgres never got"
}

// Validate checks the options.
func (w *Writes) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if w.Burst < 1 || w.Burst > MaxBurst {
		errs.Add("write_burst", "%d out of range (accepted: 1 to %d writes)", w.Burst, MaxBurst)
	}
	if w.Keys < 1 || w.Keys > 100 {
		errs.Add("write_keys", "%d out of range (accepted: 1 to 100 items)", w.Keys)
	}
	return errs
}

func (w *Writes) Sends() int { return w.Burst }

// Requires the testbed: its write endpoint and its likes table.
func (*Writes) Requires(c Caps) error {
	if !c.Writes {
		return errors.New("the testbed's write endpoint and likes table (a testbed, not a service)")
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
	return fmt.Sprintf("POST %d likes at T to items %v through %d endpoints, then read their counters in Postgres until each acknowledged like is there (up to %s)",
		w.Burst, ids, len(env.API), settleTimeout)
}

// likes sums the items' counters in Postgres.
func likes(ctx context.Context, env Env, ids []int64) (int64, error) {
	var n int64
	err := env.DB.QueryRow(ctx, `SELECT coalesce(sum(n), 0)::bigint FROM likes WHERE item_id = ANY($1)`, ids).Scan(&n)
	return n, err
}

// Fire sends the writes at once, each on its own request, and waits for
// every answer.
func (w *Writes) Fire(ctx context.Context, env Env) (Fired, error) {
	ids, err := w.items(env)
	if err != nil || len(ids) == 0 || len(env.API) == 0 {
		return Fired{}, fmt.Errorf("writes: no items or endpoints (%v)", err)
	}
	d := &WritesDetail{Items: ids, Sent: w.Burst}
	if d.before, err = likes(ctx, env, ids); err != nil {
		return Fired{}, fmt.Errorf("writes: read the likes table: %w (a testbed seeded before the writes existed has none: testbed down, then up)", err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: w.Burst}}
	defer client.CloseIdleConnections()
	start := time.Now()
	took := make([]time.Duration, w.Burst)
	ok := make([]bool, w.Burst)
	var wg sync.WaitGroup
	for i := range w.Burst {
		wg.Go(func() {
			url := fmt.Sprintf("%s/items/%d/likes", strings.TrimSuffix(env.API[i%len(env.API)], "/"), ids[i%len(ids)])
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
			if err != nil {
				return
			}
			req.Header.Set("X-Herdbench-Write-Id", fmt.Sprintf("w%d-%d", start.UnixNano(), i))
			resp, err := client.Do(req)
			took[i] = time.Since(start)
			if err == nil {
				resp.Body.Close()
				ok[i] = resp.StatusCode/100 == 2
			}
		})
	}
	wg.Wait()
	for _, o := range ok {
		if o {
			d.Acked++
		}
	}
	d.Errors = d.Sent - d.Acked
	slices.Sort(took)
	d.P50MS = float64(took[len(took)/2].Microseconds()) / 1000
	d.P99MS = float64(took[min(len(took)-1, len(took)*99/100)].Microseconds()) / 1000
	return Fired{Detail: d}, nil
}

// Settle reads the items' counters until they rose by every acknowledged
// write, or settleTimeout passes: what is missing then is lost.
func (w *Writes) Settle(ctx context.Context, env Env, detail any) any {
	d, ok := detail.(*WritesDetail)
	if !ok {
		return detail
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	read := func() {
		if n, err := likes(ctx, env, d.Items); err == nil {
			d.Applied = n - d.before
		}
	}
	for read(); d.Applied < int64(d.Acked) && ctx.Err() == nil; read() {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	d.Lost = max(int64(d.Acked)-d.Applied, 0)
	d.SettleMS = time.Since(start).Milliseconds()
	return d
}
