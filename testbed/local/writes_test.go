package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/herdbench/herdbench/internal/machinelock"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
)

// likes reads an item's counter from Postgres itself.
func (f *fleet) likes(id int64) int64 {
	f.t.Helper()
	return f.scalar(`SELECT n FROM likes WHERE item_id = $1`, id)
}

// like sends n writes of item id to the replicas in urls, 20 at a time,
// and returns how many were acknowledged (2xx).
func like(t *testing.T, urls []string, id int64, n int) int64 {
	t.Helper()
	var acked atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/items/%d/likes", urls[i%len(urls)], id), nil)
			req.Header.Set(admin.WriteIDHeader, fmt.Sprintf("t%d-%d-%d", id, time.Now().UnixNano(), i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				acked.Add(1)
			}
		})
	}
	wg.Wait()
	return acked.Load()
}

// settles polls until cond holds or 15s pass.
func settles(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling, bounded by the deadline above
	}
}

// Every write strategy on the real replicas: what they acknowledged is
// what Postgres holds once the queue drained and the coalescers flushed,
// counted in Postgres itself and by the replicas; and each like fanned out
// to the item's 3 followers, a feed row each, numbered 1 to 3.
func TestEveryWriteStrategyAppliesWhatItAcknowledged(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	t.Cleanup(func() {
		f.configure(`{}`)
		f.scalar(`WITH u AS (UPDATE likes SET followers = 0 WHERE followers <> 0 RETURNING item_id) SELECT count(*) FROM u`)
	})
	feed := func(id int64, follower int) int64 {
		return f.scalar(`SELECT count(*) FROM feed WHERE item_id = $1 AND follower = $2`, id, follower)
	}
	for i, strategy := range replica.WriteStrategies {
		f.configure(fmt.Sprintf(`{"write_strategy":%q,"coalesce_interval":"200ms","write_batch":50}`, strategy))
		id := int64(900 + i)
		f.scalar(`WITH u AS (UPDATE likes SET followers = 3 WHERE item_id = $1 RETURNING item_id) SELECT count(*) FROM u`, id)
		feedBefore := f.scalar(`SELECT count(*) FROM feed WHERE item_id = $1`, id)
		before := f.likes(id)
		acked := like(t, f.st.API, id, 300)
		if acked != 300 {
			t.Errorf("%s: %d of 300 writes acknowledged; want all", strategy, acked)
		}
		settles(t, strategy+": the acknowledged writes in Postgres, and the replicas' count of them", func() bool {
			return f.likes(id)-before == acked && int64(f.metric(admin.MetricWritesApplied)) == acked
		})
		if w := f.metric(admin.MetricWrites); int64(w) != acked {
			t.Errorf("%s: replicas answered %g writes; want %d", strategy, w, acked)
		}
		rows := f.scalar(`SELECT count(*) FROM feed WHERE item_id = $1`, id) - feedBefore
		if rows != 3*acked || feed(id, 0) != 0 || feed(id, 4) != 0 {
			t.Errorf("%s: %d feed rows for %d likes of an item with 3 followers, %d for follower 0, %d for follower 4; want 3 per like, for followers 1 to 3",
				strategy, rows, acked, feed(id, 0), feed(id, 4))
		}
	}
}

// A crash between acknowledging and applying: the queue loses nothing (the
// dead consumer's writes are claimed by another and applied once), and
// coalesce loses what the dead replica held, which the counts show.
func TestAWriteHerdSurvivesACrashedConsumerOnlyWhenQueued(t *testing.T) {
	requireBinaries(t)
	tb, err := Start(context.Background(), Config{StateDir: stateDir(t), Binary: binary, Replicas: 2, Items: 100})
	if err != nil {
		t.Fatal(err)
	}
	machinelock.Share(t) // the herd is load; the start is not
	defer tb.Stop()
	f := newFleet(t, tb)
	signal := func(name string, sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(tb.Status().PIDs[name], sig); err != nil {
			t.Fatal(err)
		}
	}
	kill := func(name string) { t.Helper(); signal(name, syscall.SIGKILL) }

	// queue, applied at 100 writes/s per replica: a backlog the burst
	// leaves behind, and api-1 dies with some of it read and unapplied
	f.configure(`{"write_strategy":"queue","apply_rate":100,"write_batch":20}`)
	before := f.likes(7)
	acked := like(t, f.st.API, 7, 400)
	// api-1 dies while it holds a batch: it reads 20, applies them over
	// about 200 ms, then reads again, so it holds one nearly always, but a
	// busy machine may find it between two. It is frozen (SIGSTOP) before
	// its pending entries are read, so it cannot acknowledge them between
	// the look and the kill; they stay its own after the kill until
	// another consumer claims them (2 s idle)
	held := func() int64 {
		p, err := f.rdb.XPending(context.Background(), replica.WriteStream, replica.WriteGroup).Result()
		if err != nil {
			t.Fatal(err)
		}
		return p.Consumers["api-1"]
	}
	var n int64
	for deadline := time.Now().Add(5 * time.Second); ; {
		signal("api-1", syscall.SIGSTOP)
		if n = held(); n > 0 || time.Now().After(deadline) {
			break
		}
		signal("api-1", syscall.SIGCONT)
		time.Sleep(5 * time.Millisecond) // polling, bounded by the deadline
	}
	kill("api-1")
	if n == 0 {
		t.Errorf("queue: api-1 held no read and unapplied write when it died; want some, for another consumer to claim")
	}
	settles(t, "queue: every acknowledged write applied after api-1 died", func() bool { return f.likes(7)-before == acked })
	if acked != 400 {
		t.Errorf("queue: %d of 400 acknowledged; want all (acknowledged once in the stream)", acked)
	}

	// coalesce, flushing every minute: api-2's writes are flushed when its
	// strategy changes; api-1's die with it
	if _, err := tb.Restart(context.Background(), "api", false); err != nil {
		t.Fatal(err)
	}
	f.configure(`{"write_strategy":"coalesce","coalesce_interval":"1m"}`)
	before = f.likes(8)
	onDead := like(t, f.st.API[:1], 8, 50)
	onLive := like(t, f.st.API[1:], 8, 50)
	kill("api-1")
	req, _ := http.NewRequest(http.MethodPut, f.st.API[1]+"/admin/config", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // back to direct: api-2 flushes what it held
	if got := f.likes(8) - before; got != onLive || onDead != 50 {
		t.Errorf("coalesce: Postgres gained %d; acknowledged %d by the replica that died and %d by the live one; want the live one's only", got, onDead, onLive)
	}
}

// readLikes reads an item from replica i and returns the likes it carries.
func (f *fleet) readLikes(i int, id int64) int64 {
	f.t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/items/%d", f.st.API[i%len(f.st.API)], id))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var it api.Item
	if err := json.NewDecoder(resp.Body).Decode(&it); err != nil || resp.StatusCode != http.StatusOK {
		f.t.Fatalf("GET item %d: %s, %v", id, resp.Status, err)
	}
	return it.Likes
}

// The read side sees the writes per write_invalidate: delete drops the
// item's cache entry once the write is in Postgres, so the next read loads
// the new count; refresh has every replica reload it; none leaves the
// cached count until the entry expires. Queued writes show once applied.
func TestReadsSeeTheWritesPerInvalidation(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	t.Cleanup(func() { f.configure(`{}`) })
	for i, mode := range replica.WriteInvalidations {
		f.configure(fmt.Sprintf(`{"write_invalidate":%q,"ttl":"1m"}`, mode))
		id := int64(950 + i)
		f.expire(id, true)
		before := f.readLikes(0, id) // a miss: loaded and cached
		if db := f.likes(id); before != db || f.readLikes(0, id) != before {
			t.Fatalf("%s: item %d carries %d likes; Postgres holds %d", mode, id, before, db)
		}
		if acked := like(t, f.st.API[:1], id, 5); acked != 5 {
			t.Fatalf("%s: %d of 5 writes acknowledged", mode, acked)
		}
		switch mode {
		case replica.InvalidateNone:
			if got := f.readLikes(0, id); got != before {
				t.Errorf("none: item %d read %d likes after 5 writes; want the cached %d until it expires", id, got, before)
			}
		case replica.InvalidateDelete: // direct invalidates before it answers
			if got := f.readLikes(0, id); got != before+5 {
				t.Errorf("delete: item %d read %d likes after 5 writes; want %d", id, got, before+5)
			}
		case replica.InvalidateRefresh:
			// the five writes' reloads ran side by side, and one that read
			// the row before a later write may have set last (the race
			// below): once they are done, one more write, reloaded alone
			f.drain()
			like(t, f.st.API[:1], id, 1)
			settles(t, "refresh: every replica reads the new count", func() bool {
				return f.readLikes(0, id) == before+6 && f.readLikes(1, id) == before+6
			})
		}
	}
	// Queued writes are applied in batches, each deleting the entry: a read
	// between two batches loads the count so far, and a load in flight when
	// the next batch commits and deletes sets that older count after the
	// deletion (cache-aside's race: the entry is stale until it expires).
	// So the reads start once Postgres holds every write.
	f.configure(`{"write_strategy":"queue","write_invalidate":"delete","ttl":"1m"}`)
	id := int64(960)
	f.expire(id, true)
	before := f.readLikes(0, id)
	like(t, f.st.API, id, 5)
	settles(t, "queue: the writes in Postgres", func() bool { return f.likes(id) == before+5 })
	settles(t, "queue: the reads see the writes once applied", func() bool { return f.readLikes(0, id) == before+5 })
}
