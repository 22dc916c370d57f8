package observe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis runs a redis-server of its own for t on a unix socket, and
// returns a client once it answers. Without redis-server the test skips,
// and fails when CI is set.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and redis-server is missing: %v", err)
		}
		t.Skipf("redis-server missing: %v", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for rdb.Ping(ctx).Err() != nil {
		select {
		case <-ctx.Done():
			t.Fatalf("redis-server on %s did not answer within 10s", sock)
		case <-tick.C:
		}
	}
	return rdb
}

// A queue's depth is none before its stream exists, then what its group
// has not acknowledged; a key that is not a stream is an error, not none.
func TestQueueDepth(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	q := Queue{Stream: "writes", Group: "appliers"}
	depth := func(want int64, wantErr bool) {
		t.Helper()
		got, err := q.depth(ctx, rdb)
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
