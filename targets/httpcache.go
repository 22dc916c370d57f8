package targets

import (
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/herdbench/herdbench/triggers"
)

// HTTPCacheSpec is an HTTP cache in front of the service (nginx, Varnish,
// a CDN), invalidated through its own API: expire purges the hot keys
// with Purge, flush empties it with Flush.
type HTTPCacheSpec struct {
	// URLs are the cache nodes the invalidations go to, each of them;
	// none: the endpoints, when the load goes to the cache itself
	URLs  []string          `yaml:"urls"`
	Purge *CacheRequestSpec `yaml:"purge"` // one key: {key} in the path or a header
	Flush *FlushSpec        `yaml:"flush"` // the whole cache: a request, or a command
}

// CacheRequestSpec is one invalidation request.
type CacheRequestSpec struct {
	Method  string            `yaml:"method"` // a token: PURGE, BAN, DELETE, POST...
	Path    string            `yaml:"path"`   // {key} replaced by the key, escaped
	Headers map[string]string `yaml:"headers"`
}

// FlushSpec empties the whole cache: a request (BAN /), or a command run
// with sh -c on this machine.
type FlushSpec struct {
	Method  string            `yaml:"method"`
	Path    string            `yaml:"path"`
	Headers map[string]string `yaml:"headers"`
	Run     string            `yaml:"run"`
}

// request is the flush's request, when it is one.
func (fl *FlushSpec) request() *CacheRequestSpec {
	return &CacheRequestSpec{Method: fl.Method, Path: fl.Path, Headers: fl.Headers}
}

// CacheLimit is how long one invalidation request, or the flush command,
// may take.
const CacheLimit = 10 * time.Second

func (c *checker) httpCache() {
	h := c.f.HTTPCache
	if h == nil {
		return
	}
	c.baseURLs("http_cache.urls", h.URLs, "the cache's http:// or https:// base URL, such as http://127.0.0.1:6081", "the endpoints")
	if h.Purge == nil {
		c.bad("http_cache", "no purge (accepted: http_cache.purge, the request that invalidates one key, such as {method: PURGE, path: /items/{key}})")
	} else {
		c.cacheRequest("http_cache.purge", h.Purge)
		uses := strings.Contains(h.Purge.Path, "{key}")
		for _, v := range h.Purge.Headers {
			uses = uses || strings.Contains(v, "{key}")
		}
		if !uses {
			c.bad("http_cache.purge", "no key template: {key} appears nowhere (accepted: {key} in http_cache.purge.path or a http_cache.purge.headers value)")
		}
	}
	if fl := h.Flush; fl != nil {
		request := fl.Method != "" || fl.Path != "" || len(fl.Headers) > 0
		switch {
		case request && fl.Run != "":
			c.bad("http_cache.flush", "both a request and run (accepted: one of them: {method: BAN, path: /} or {run: a command})")
		case !request && strings.TrimSpace(fl.Run) == "":
			c.bad("http_cache.flush", "empty (accepted: a request, {method: BAN, path: /}, or {run: a command})")
		case request:
			c.cacheRequest("http_cache.flush", fl.request())
			if strings.Contains(fl.Path, "{key}") {
				c.bad("http_cache.flush.path", "%q has {key} (accepted: a path for the whole cache; the per-key request is http_cache.purge)", fl.Path)
			}
		}
	}
}

// cacheRequest checks an invalidation request at path, and reads its
// headers' variables.
func (c *checker) cacheRequest(path string, r *CacheRequestSpec) {
	if !token(r.Method) {
		c.bad(path+".method", "%q is not a method (accepted: an HTTP method token, such as PURGE, BAN or DELETE)", r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") {
		c.bad(path+".path", "%q does not start with / (accepted: a path such as /items/{key})", r.Path)
	}
	c.headers(path, r.Headers, nil)
}

// token says whether s is an HTTP token (RFC 9110): a method or a header
// name.
func token(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !httpguts.IsTokenRune(r) }) < 0
}

// cacheURLs are the nodes the invalidations go to.
func (h *HTTPCacheSpec) cacheURLs(endpoints []string) []string {
	if len(h.URLs) > 0 {
		return h.URLs
	}
	return endpoints
}

// httpCache is the target's HTTP cache as a trigger touches it, nil when
// it declares none: the target's headers go with every invalidation.
func (t *Target) httpCache() *triggers.HTTPCache {
	if t.file == nil || t.file.HTTPCache == nil || t.file.HTTPCache.Purge == nil {
		return nil
	}
	h := t.file.HTTPCache
	c := &triggers.HTTPCache{URLs: h.cacheURLs(t.Endpoints), Header: t.Header.Clone(), Limit: CacheLimit,
		Purge: triggers.CacheRequest(*h.Purge)}
	if fl := h.Flush; fl != nil && fl.Run != "" {
		c.Run = fl.Run
	} else if fl != nil {
		c.FlushRequest = new(triggers.CacheRequest(*fl.request()))
	}
	return c
}
