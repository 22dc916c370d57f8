package triggers

import (
	"errors"
	"regexp"
	"strings"
)

// needKeys is what the triggers that touch keys in Redis need.
func needKeys(c Caps) error {
	switch {
	case !c.Redis:
		return errors.New("a Redis (redis.address in the target file)")
	case !c.RedisKeys:
		return errors.New("the Redis key of a request's key and the keys it may touch (redis.key and redis.pattern in the target file)")
	}
	return nil
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
