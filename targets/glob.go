package targets

import (
	"regexp"
	"strconv"
	"strings"
)

// globRegexp is a Redis glob pattern (KEYS, SCAN MATCH: * ? [set] [^set]
// \x) as a regular expression of the whole key.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString("(?s:.*)")
		case '?':
			b.WriteString("(?s:.)")
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
			}
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				b.WriteString(regexp.QuoteMeta("["))
				continue
			}
			set := glob[i+1 : i+1+end]
			if strings.HasPrefix(set, "^") {
				set = "^" + strings.ReplaceAll(set[1:], `\`, `\\`)
			} else {
				set = strings.ReplaceAll(set, `\`, `\\`)
			}
			b.WriteString("[" + set + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// sampleKey is a key of ks, for checking what a key becomes: its first.
func sampleKey(ks KeySpace) string {
	switch {
	case len(ks.List) > 0:
		return ks.List[0]
	case ks.Range != nil:
		return strconv.FormatInt(ks.Range.From, 10)
	case ks.Zipf != nil:
		return strconv.FormatInt(ks.Zipf.From, 10)
	}
	return "1"
}
