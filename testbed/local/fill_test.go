package local

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/replica"
)

// cached is what Redis holds for an item: its entry and the TTLs of its
// fresh and stale copies.
type cached struct {
	item          api.Item
	deltaMS       float64
	expiryIn      time.Duration // the entry's expiry, from when it was read
	ttl, staleTTL time.Duration
}

func (f *fleet) cached(id int64) cached {
	f.t.Helper()
	ctx := context.Background()
	key := api.ItemKey(id)
	b, err := f.rdb.Get(ctx, key).Bytes()
	if err != nil {
		f.t.Fatalf("GET %s: %v", key, err)
	}
	var e struct {
		Item     api.Item `json:"item"`
		DeltaMS  float64  `json:"delta_ms"`
		ExpiryMS int64    `json:"expiry_ms"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		f.t.Fatalf("%s holds %q: %v", key, b, err)
	}
	stale := "stale:" + key
	if sb, err := f.rdb.Get(ctx, stale).Bytes(); err != nil || string(sb) != string(b) {
		f.t.Fatalf("%s = %q, %v; want the same entry as %s", stale, sb, err, key)
	}
	return cached{item: e.Item, deltaMS: e.DeltaMS, expiryIn: time.Until(time.UnixMilli(e.ExpiryMS)),
		ttl: f.rdb.PTTL(ctx, key).Val(), staleTTL: f.rdb.PTTL(ctx, stale).Val()}
}

// The bulk fill stores, under every strategy, what a miss of the same
// config stores: the same entry for the same item, with TTLs from the same
// rules (the arm's TTL and jitter, the stale copy's TTL), and no load.
func TestFillStoresWhatAMissStores(t *testing.T) {
	tb := sharedTestbed(t)
	f := newFleet(t, tb)
	client := admin.NewClient(tb.Status().API[0])
	ctx := context.Background()
	for _, strategy := range replica.Strategies {
		t.Run(strategy, func(t *testing.T) {
			f.t = t
			f.configure(fmt.Sprintf(`{"strategy": %q, "ttl": "30s", "stale_ttl": "5m", "ttl_jitter": 0.5, "query_cost": "0s"}`, strategy))
			if err := f.rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			before := f.metric(admin.MetricLoads)
			res, err := client.Fill(ctx, 40, 60)
			if err != nil || res.Filled != 21 || res.Queries != 1 {
				t.Fatalf("Fill(40, 60) = %+v, %v; want 21 items in one query", res, err)
			}
			if loads := f.metric(admin.MetricLoads) - before; loads != 0 {
				t.Errorf("the fill counted %v loads; want none: it is no item query", loads)
			}
			filled := f.cached(50)
			if err := f.rdb.Del(ctx, api.ItemKey(50), "stale:"+api.ItemKey(50)).Err(); err != nil {
				t.Fatal(err)
			}
			if o := f.get(0, 50); o != admin.OutcomeMiss {
				t.Fatalf("GET /items/50 after its keys were removed = %q; want a miss", o)
			}
			missed := f.cached(50)
			if filled.item != missed.item {
				t.Errorf("fill cached %+v; a miss caches %+v", filled.item, missed.item)
			}
			for name, c := range map[string]cached{"fill": filled, "miss": missed} {
				ttlMax := 30 * time.Second
				if strings.Contains(strategy, replica.TTLJitter) {
					ttlMax = 45 * time.Second // ttl + up to ttl_jitter of it
				}
				if c.ttl < 29*time.Second || c.ttl > ttlMax || c.expiryIn > c.ttl+time.Second || c.expiryIn < c.ttl-time.Second ||
					c.staleTTL < 299*time.Second || c.staleTTL > 5*time.Minute || c.deltaMS < 0 || c.deltaMS > 1000 {
					t.Errorf("%s: ttl %s (entry's expiry in %s), stale ttl %s, delta %gms; want 30s to %s with the expiry the TTL's, stale 5m, a load time",
						name, c.ttl, c.expiryIn, c.staleTTL, c.deltaMS, ttlMax)
				}
			}
		})
	}
}

// A fill of items the testbed does not have says so.
func TestFillOfMissingItems(t *testing.T) {
	tb := sharedTestbed(t)
	_, err := admin.NewClient(tb.Status().API[0]).Fill(context.Background(), 990, 1010)
	if err == nil || !strings.Contains(err.Error(), "11 of the 21 items from 990 to 1010 exist") {
		t.Errorf("Fill(990, 1010) of 1000 items = %v; want how many exist", err)
	}
}
