package targets

import (
	"maps"
	"net/http"
	"slices"

	"golang.org/x/net/http/httpguts"
)

// headers checks and expands a set of headers at path: each name an HTTP
// token, once whatever its case (net/http would send one of the two), each
// value given (an empty one would send the header empty, or nothing,
// while the file reads as if it sent something: leave the header out
// instead) and one net/http sends (no newline or other control byte),
// ${VAR} read from the environment. An arm's headers from the environment
// are named in secret, which it returns.
func (c *checker) headers(path string, h map[string]string, secret []string) []string {
	seen := map[string]string{} // canonical name -> as written
	for _, k := range slices.Sorted(maps.Keys(h)) {
		v, at := h[k], "headers."+k
		if path != "" {
			at = path + "." + at
		}
		if !token(k) {
			c.bad(at, "%q is not a header name (accepted: a token, such as X-Api-Key)", k)
		} else if first, twice := seen[http.CanonicalHeaderKey(k)]; twice {
			c.bad(at, "the same header as %s: header names are case-insensitive (accepted: each header once)", first)
		} else {
			seen[http.CanonicalHeaderKey(k)] = k
		}
		if v == "" {
			c.bad(at, "empty (accepted: a value, or ${VAR} from the environment; or leave the header out to send none)")
			continue
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			c.bad(at, "%q has a newline or another control character, which net/http refuses to send (accepted: printable text and tabs)", v)
			continue
		}
		if envRef.MatchString(v) {
			secret = append(secret, k)
		}
		h[k] = c.expand(at, v)
		if !httpguts.ValidHeaderFieldValue(h[k]) { // the secret is not shown
			c.bad(at, "the environment's value has a newline or another control character, which net/http refuses to send (accepted: printable text and tabs)")
		}
	}
	return secret
}
