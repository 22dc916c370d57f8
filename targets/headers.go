package targets

import (
	"maps"
	"slices"
)

// headers checks and expands a set of headers at path: each name an HTTP
// token, each value given (an empty one would send the header empty, or
// nothing, while the file reads as if it sent something: leave the header
// out instead), ${VAR} read from the environment. An arm's headers from
// the environment are named in secret, which it returns.
func (c *checker) headers(path string, h map[string]string, secret []string) []string {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		v, at := h[k], "headers."+k
		if path != "" {
			at = path + "." + at
		}
		if !token(k) {
			c.bad(at, "%q is not a header name (accepted: a token, such as X-Api-Key)", k)
		}
		if v == "" {
			c.bad(at, "empty (accepted: a value, or ${VAR} from the environment; or leave the header out to send none)")
			continue
		}
		if envRef.MatchString(v) {
			secret = append(secret, k)
		}
		h[k] = c.expand(at, v)
	}
	return secret
}
