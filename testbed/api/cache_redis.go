package api

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisCache is the Cache on Redis: sets pipelined, claims with SET NX
// PX, releases and the lease's set in Lua scripts, so each is atomic.
type redisCache struct{ rdb *redis.Client }

var _ Cache = (*redisCache)(nil)

// newRedisClient is the replicas' Redis client: o's pool and timeouts.
func newRedisClient(o CacheOptions) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:            o.Addr,
		PoolSize:        o.Pool,
		DialTimeout:     o.Timeout,
		ReadTimeout:     o.Timeout,
		WriteTimeout:    o.Timeout,
		DisableIdentity: true, // CLIENT SETINFO needs Redis 7.2
	})
}

// unlockScript deletes the key only if it still holds the holder's token.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// setIfHeldScript stores KEYS[2..] (values and PX TTLs in ARGV[2..], in
// pairs) only while KEYS[1] holds ARGV[1]: a set without the valid lease
// token is refused (memcache leases).
var setIfHeldScript = redis.NewScript(`if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
for i = 2, #KEYS do
  redis.call("SET", KEYS[i], ARGV[2*i-2], "PX", ARGV[2*i-1])
end
return 1`)

func (c *redisCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := c.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return b, err == nil, err
}

func (c *redisCache) Set(ctx context.Context, entries ...CacheEntry) error {
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			p.Set(ctx, e.Key, e.Value, e.TTL)
		}
		return nil
	})
	return err
}

func (c *redisCache) Add(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	return c.rdb.SetNX(ctx, key, value, ttl).Result()
}

func (c *redisCache) DeleteIfEqual(ctx context.Context, key, value string) error {
	return unlockScript.Run(ctx, c.rdb, []string{key}, value).Err()
}

func (c *redisCache) SetIfHeld(ctx context.Context, cl Claim, entries ...CacheEntry) (bool, error) {
	keys := []string{cl.Key}
	args := []any{cl.Token}
	for _, e := range entries {
		keys = append(keys, e.Key)
		args = append(args, e.Value, e.TTL.Milliseconds())
	}
	n, err := setIfHeldScript.Run(ctx, c.rdb, keys, args...).Int()
	return n == 1, err
}

func (c *redisCache) Delete(ctx context.Context, keys ...string) error {
	return c.rdb.Del(ctx, keys...).Err()
}

func (c *redisCache) Flush(ctx context.Context) error { return c.rdb.FlushDB(ctx).Err() }
func (c *redisCache) Ping(ctx context.Context) error  { return c.rdb.Ping(ctx).Err() }
func (c *redisCache) Close() error                    { return c.rdb.Close() }
