package triggers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Expire invalidates the hot keys at T, as a deploy or a write path that
// deletes cache entries does: every hot key misses at once.
type Expire struct{}

var (
	_ Trigger  = Expire{}
	_ Requirer = Expire{}
)

func (Expire) Name() string     { return "expire" }
func (Expire) Describe() string { return "hot keys invalidated at T (UNLINK)" }

// Requires a Redis and its keys.
func (Expire) Requires(c Caps) error { return needKeys(c) }

// Fire unlinks the hot keys' fresh copies; stale copies stay.
func (Expire) Fire(ctx context.Context, env Env) (Detail, error) {
	keys := HotRedisKeys(env)
	if len(keys) == 0 {
		return Detail{"keys": 0, "keys_removed": 0}, nil
	}
	n, err := env.Redis.Unlink(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("expire: unlink %d hot keys: %w", len(keys), err)
	}
	return Detail{"keys": len(keys), "keys_removed": n}, nil
}

// needKeys is what the triggers that touch keys need.
func needKeys(c Caps) error {
	switch {
	case !c.Redis:
		return errors.New("a Redis (redis.address in the target file)")
	case !c.RedisKeys:
		return errors.New("the Redis key of a request's key and the keys it may touch (redis.key and redis.pattern in the target file)")
	}
	return nil
}

// HotRedisKeys are the Redis keys of the hot keys that the pattern lets a
// trigger touch, hottest first.
func HotRedisKeys(env Env) []string {
	var keys []string
	for _, k := range env.HotKeys {
		if rk := env.RedisKey(k); MatchPattern(env.Pattern, rk) {
			keys = append(keys, rk)
		}
	}
	return keys
}

// MatchPattern says whether key matches a Redis glob pattern (*, ?, [...]
// and \ escapes, as KEYS and SCAN MATCH read them); "" matches nothing.
func MatchPattern(pattern, key string) bool {
	if pattern == "" {
		return false
	}
	re, err := globRegexp(pattern)
	return err == nil && re.MatchString(key)
}

func globRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(pattern[i:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := pattern[i+1 : i+j]
			if strings.HasPrefix(class, "^") {
				class = "^" + regexp.QuoteMeta(class[1:])
			} else {
				class = regexp.QuoteMeta(class)
			}
			b.WriteString("[" + class + "]")
			i += j
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(string(pattern[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
