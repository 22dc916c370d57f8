package api

import (
	"strconv"
	"sync"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
	"golang.org/x/sync/singleflight"
)

// localStrategy is an in-process tier in front of Redis, with its own TTL
// and jitter.
type localStrategy replica.LocalKnobs

var (
	_ Tier      = localStrategy{}
	_ Stateful  = localStrategy{}
	_ Counted   = localStrategy{}
	_ Forgetter = (*localTier)(nil)
)

// MetricLocalHits counts local's answers.
const MetricLocalHits = "herdbench_api_local_hits_total"

func (localStrategy) Counters() []Counter {
	return []Counter{{MetricLocalHits, "Requests answered from the replica's in-process tier (local), without Redis."}}
}

// localTier is the replica's in-process copies, emptied by a reset and
// kept through a config change.
type localTier struct {
	mu    sync.Mutex // guards items
	items map[int64]localEntry
	sf    singleflight.Group
}

// localEntry is an item in the replica's in-process tier.
type localEntry struct {
	item    Item
	expires time.Time
}

func (localStrategy) NewState(_ StateEnv, prev any) any {
	if prev != nil {
		return prev
	}
	return &localTier{items: map[int64]localEntry{}}
}

// ServeTier answers from the replica's copy. A local miss fills the tier
// once per key, as loading caches such as Caffeine's do: the replica's
// other requests for it wait and share it.
func (l localStrategy) ServeTier(r *Request, next func() (Item, string, error)) (Item, string, error) {
	t := r.State(replica.Local).(*localTier)
	if it, ok := t.get(r.id); ok {
		r.Count(MetricLocalHits)
		return it, admin.OutcomeLocal, nil
	}
	type filled struct {
		it      Item
		outcome string
	}
	led := false
	res, err, _ := t.sf.Do("local:"+strconv.FormatInt(r.id, 10), func() (any, error) {
		led = true
		it, outcome, err := next()
		if err == nil {
			ttl := time.Duration(l.TTL)
			t.put(r.id, it, ttl+time.Duration(r.Random()*l.Jitter*float64(ttl)))
		}
		return filled{it, outcome}, err
	})
	f, _ := res.(filled)
	if !led && err == nil {
		r.v.m.coalesced.Inc()
		return f.it, admin.OutcomeCoalesced, nil
	}
	return f.it, f.outcome, err
}

func (t *localTier) get(id int64) (Item, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.items[id]
	if !ok || time.Now().After(e.expires) {
		return Item{}, false
	}
	return e.item, true
}

// put keeps it for ttl.
func (t *localTier) put(id int64, it Item, ttl time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items[id] = localEntry{item: it, expires: time.Now().Add(ttl)}
}

// Forget drops the copies of ids.
func (t *localTier) Forget(ids []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		delete(t.items, id)
	}
}
