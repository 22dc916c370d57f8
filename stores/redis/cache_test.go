package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/storetest"
	"github.com/herdbench/herdbench/triggers"
)

// redisEnv is a real Redis holding item:1 to item:5 and other:1, with the
// hot keys 1, 2, 3 and 9 (which it does not hold); its triggers may touch
// the keys of item:*.
func redisEnv(t *testing.T) (triggers.Env, *Cache, *redis.Client) {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: storetest.Redis(t), DisableIdentity: true})
	t.Cleanup(func() { rc.Close() })
	for _, k := range []string{"item:1", "item:2", "item:3", "item:4", "item:5", "other:1"} {
		if err := rc.Set(context.Background(), k, "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	r := &Cache{Client: &Client{rc}, Key: func(k string) string { return "item:" + k }, Pattern: "item:*", Channel: "invalidate"}
	return triggers.Env{Caches: []triggers.Cache{r}, HotKeys: []string{"1", "2", "3", "9"}}, r, rc
}

// inRedis lists which of keys Redis holds.
func inRedis(t *testing.T, rc *redis.Client, keys ...string) string {
	t.Helper()
	var out []string
	for _, k := range keys {
		n, err := rc.Exists(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			out = append(out, k)
		}
	}
	return strings.Join(out, " ")
}

var allKeys = []string{"item:1", "item:2", "item:3", "item:4", "item:5", "other:1"}

// expire unlinks the hot keys, and only them.
func TestExpireUnlinksTheHotKeysInRedis(t *testing.T) {
	env, _, rc := redisEnv(t)
	if got, want := (&triggers.Expire{}).Plan(env), "UNLINK 4 Redis keys (the hot keys matching item:*): item:1, item:2, item:3, item:9"; got != want {
		t.Errorf("Plan = %q; want %q", got, want)
	}
	fired, err := (&triggers.Expire{}).Fire(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if d := fired.Detail.(*triggers.ExpireDetail); d.Keys != 4 || d.KeysRemoved != 3 || d.Memcached != nil || d.HTTPCache != nil {
		t.Errorf("detail = %+v; want 4 keys, the 3 held removed", d)
	}
	if got := inRedis(t, rc, allKeys...); got != "item:4 item:5 other:1" {
		t.Errorf("left %q; want item:4 item:5 other:1", got)
	}
}

// ttl makes the hot keys expire exactly at T; the others keep theirs.
func TestTTLAlignsRedisKeysAtT(t *testing.T) {
	env, _, rc := redisEnv(t)
	ctx := context.Background()
	env.T = time.Now().Add(time.Minute).Truncate(time.Millisecond)
	ttl := &triggers.TTL{}
	if err := ttl.Align(ctx, env); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"item:1", "item:2", "item:3"} {
		if at, err := rc.PExpireTime(ctx, k).Result(); err != nil || at != time.Duration(env.T.UnixMilli())*time.Millisecond {
			t.Errorf("PEXPIRETIME %s = %v, %v; want T, %d ms", k, at, err, env.T.UnixMilli())
		}
	}
	if at, _ := rc.PExpireTime(ctx, "item:4").Result(); at == time.Duration(env.T.UnixMilli())*time.Millisecond {
		t.Errorf("item:4, not hot, was aligned at T")
	}
	fired, err := ttl.Fire(ctx, env)
	if d := fired.Detail.(*triggers.TTLDetail); err != nil || d.Keys != 4 || d.Missing != 1 || d.Memcached != nil {
		t.Errorf("Fire = %+v, %v; want the 4 hot keys of the pattern, item:9 missing", d, err)
	}
	// a hot key that expired before its expiry was pinned (a warm that
	// ended longer than its TTL before the load) is missing too
	if err := rc.Del(ctx, "item:2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := ttl.Align(ctx, env); err != nil {
		t.Fatal(err)
	}
	fired, err = ttl.Fire(ctx, env)
	if d := fired.Detail.(*triggers.TTLDetail); err != nil || d.Keys != 4 || d.Missing != 2 || len(fired.Warnings) != 1 || !strings.Contains(fired.Warnings[0], "2 of 4 hot keys") {
		t.Errorf("with item:2 gone, Fire = %+v, %v, warnings %q; want 4 hot keys, 2 missing, said", d, err, fired.Warnings)
	}
}

// flush removes the keys of the pattern on a Redis, and the whole
// database on one whose target grants FLUSHDB (the testbed's).
func TestFlushRedisKeepsToThePatternUnlessGrantedFlushDB(t *testing.T) {
	env, r, rc := redisEnv(t)
	ctx := context.Background()
	if got, want := (&triggers.Flush{}).Plan(env), "SCAN MATCH item:* and UNLINK every key it finds (only keys matching the pattern)"; got != want {
		t.Errorf("Plan = %q; want %q", got, want)
	}
	fired, err := (&triggers.Flush{}).Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if d := fired.Detail.(*triggers.FlushDetail); d.KeysFlushed != 5 || d.Pattern != "item:*" {
		t.Errorf("detail = %+v; want the 5 keys of item:* flushed, the pattern named", d)
	}
	if got := inRedis(t, rc, allKeys...); got != "other:1" {
		t.Errorf("left %q; want other:1", got)
	}
	r.FlushDB = true
	if got, want := (&triggers.Flush{}).Plan(env), "FLUSHDB on the testbed's Redis"; got != want {
		t.Errorf("Plan = %q; want %q", got, want)
	}
	fired, err = (&triggers.Flush{}).Fire(ctx, env)
	if d := fired.Detail.(*triggers.FlushDetail); err != nil || d.KeysFlushed != 1 || d.Pattern != "" {
		t.Errorf("owned: Fire = %+v, %v; want the 1 key left flushed, no pattern", d, err)
	}
	if got := inRedis(t, rc, allKeys...); got != "" {
		t.Errorf("left %q after FLUSHDB; want nothing", got)
	}
}

// notify publishes the hot keys on the channel; outage pauses the Redis
// whole for its time, and it answers again after.
func TestNotifyAndPauseOnRedis(t *testing.T) {
	env, _, rc := redisEnv(t)
	ctx := context.Background()
	sub := rc.Subscribe(ctx, "invalidate")
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(ctx); err != nil { // the subscription is confirmed
		t.Fatal(err)
	}
	if got, want := (&triggers.Notify{}).Plan(env), "PUBLISH the 4 hot keys on channel invalidate: 1, 2, 3, 9"; got != want {
		t.Errorf("Plan = %q; want %q", got, want)
	}
	fired, err := (&triggers.Notify{}).Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if d := fired.Detail.(*triggers.NotifyDetail); d.Keys != 4 || d.Receivers != 1 {
		t.Errorf("detail = %+v; want 4 keys, 1 receiver", d)
	}
	if m, err := sub.ReceiveMessage(ctx); err != nil || m.Payload != "1,2,3,9" {
		t.Errorf("the subscriber got %v, %v; want 1,2,3,9", m, err)
	}

	o := &triggers.Outage{For: herd.Duration(300 * time.Millisecond), Dependency: herd.Redis}
	if got, want := o.Plan(env), "CLIENT PAUSE 300 ALL on the Redis (every client of it waits) for 300ms, then CLIENT UNPAUSE"; got != want {
		t.Errorf("Plan = %q; want %q", got, want)
	}
	// a client of the Redis waits out the pause: its command, sent once
	// the pause began, is answered only after it
	held := make(chan time.Duration, 1)
	go func() {
		other := redis.NewClient(&redis.Options{Addr: rc.Options().Addr, ReadTimeout: 5 * time.Second, DisableIdentity: true})
		defer other.Close()
		for begin := time.Now(); time.Since(begin) < 3*time.Second; { // until the pause shows: a GET that takes 200 ms or more
			start := time.Now()
			if err := other.Get(ctx, "herdbench-pause-probe").Err(); err != nil && err != redis.Nil {
				held <- 0
				return
			}
			if d := time.Since(start); d >= 200*time.Millisecond {
				held <- d
				return
			}
		}
	}()
	fired, err = o.Fire(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-held:
		if d < 200*time.Millisecond {
			t.Errorf("a client's GET during the pause failed; want it held, then answered")
		}
	case <-time.After(5 * time.Second):
		t.Errorf("no client's GET was held by the pause; want one waiting 200 ms or more")
	}
	if d := fired.Detail.(*triggers.OutageDetail); !d.Paused || d.Dependency != herd.Redis || d.ForMS != 300 || d.DownMS < 300 {
		t.Errorf("detail = %+v; want redis paused for 300 ms", d)
	}
	if err := rc.Ping(ctx).Err(); err != nil {
		t.Errorf("PING after the pause = %v", err)
	}
}

func TestHotRedisKeysKeepToThePattern(t *testing.T) {
	r := &Cache{Key: func(k string) string { return "item:" + k }, Pattern: "item:1*"}
	if got := strings.Join(r.HotKeys([]string{"1", "2", "10", "11", "3"}), ","); got != "item:1,item:10,item:11" {
		t.Errorf("HotKeys = %s; want only the keys matching item:1*, hottest first", got)
	}
}
