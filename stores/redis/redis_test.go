package redis

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/testbed/storetest"
)

// A queue's depth is none before its stream exists, then what its group
// has not acknowledged; a key that is not a stream is an error, not none.
func TestQueueDepth(t *testing.T) {
	rdb := &Client{redis.NewClient(&redis.Options{Addr: storetest.Redis(t), DisableIdentity: true})}
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	q := observe.Queue{Stream: "writes", Group: "appliers"}
	depth := func(want int64, wantErr bool) {
		t.Helper()
		got, err := rdb.Depth(ctx, q)
		if got != want || (err != nil) != wantErr {
			t.Errorf("depth = %d, %v; want %d, error %v", got, err, want, wantErr)
		}
	}
	depth(0, false) // no stream yet
	if err := rdb.XGroupCreateMkStream(ctx, q.Stream, q.Group, "$").Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: q.Stream, Values: []string{"id", "1"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	depth(3, false) // never delivered
	msgs, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: q.Group, Consumer: "c", Streams: []string{q.Stream, ">"}, Count: 1}).Result()
	if err != nil {
		t.Fatal(err)
	}
	depth(3, false) // one delivered and pending, two never delivered
	if err := rdb.XAck(ctx, q.Stream, q.Group, msgs[0].Messages[0].ID).Err(); err != nil {
		t.Fatal(err)
	}
	depth(2, false)
	q.Stream = "not-a-stream"
	if err := rdb.Set(ctx, q.Stream, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	depth(0, true)
}

// CacheOps counts the commands the service sent (INFO commandstats'
// calls), never herdbench's own reads: five samples add none, three GETs
// and a SET add four.
func TestCacheOpsAreTheServicesCommands(t *testing.T) {
	addr := storetest.Redis(t)
	obs, err := OpenURL(context.Background(), "redis://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { obs.Close() })
	svc := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { svc.Close() })
	ctx := context.Background()
	src := observe.Source{Redis: obs}
	s0, err := src.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	read := func() observe.Sample {
		t.Helper()
		var s observe.Sample
		for range 5 {
			if s, err = src.Read(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	if s := read(); s.CacheOps != s0.CacheOps {
		t.Errorf("five reads: CacheOps %d then %d; want herdbench's own INFO left out", s0.CacheOps, s.CacheOps)
	}
	if err := svc.Set(ctx, "item:1", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		svc.Get(ctx, "item:1")
	}
	if s := read(); s.CacheOps-s0.CacheOps != 4 {
		t.Errorf("a SET and three GETs: CacheOps grew %d; want 4", s.CacheOps-s0.CacheOps)
	}
}
