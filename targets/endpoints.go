package targets

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/herdbench/herdbench/herd"
)

// endpoints checks the base URLs the load and the arms go to, and the
// hosts the file allows.
func (c *checker) endpoints() {
	f := c.f
	if len(f.Endpoints) == 0 {
		c.bad("endpoints", "none (accepted: one or more base URLs such as http://127.0.0.1:8080)")
	}
	const endpoint = "http:// or https:// with a host, such as http://127.0.0.1:8080, or a base path, http://127.0.0.1:8080/api"
	for i, e := range f.Endpoints {
		c.baseURL(fmt.Sprintf("endpoints[%d]", i), e, endpoint)
	}
	for i, a := range f.Arms {
		c.baseURLs(fmt.Sprintf("arms[%d].endpoints", i), a.Endpoints, endpoint, "the file's endpoints")
	}
	for i, h := range f.Allow {
		if err := CheckHost(h); err != nil {
			c.bad(fmt.Sprintf("allow[%d]", i), "%v", err)
		}
	}
}

// baseURLs checks a list of base URLs at path that may be left out, for
// what is used without it (without): given, it holds one or more.
func (c *checker) baseURLs(path string, urls []string, accepted, without string) {
	if len(urls) == 0 && c.f.doc.Line(path) > 0 {
		c.bad(path, "empty (accepted: one or more base URLs, each %s; or leave the key out, for %s)", accepted, without)
	}
	for i, u := range urls {
		c.baseURL(fmt.Sprintf("%s[%d]", path, i), u, accepted)
	}
}

// baseURL checks the base URL e at path. A request's path is appended to
// it as written (load.Request.URL), so it may have a base path, but
// nothing after one: a query or a fragment would swallow the request's
// path, and {key} in it would be sent as written. Credentials in it would
// be printed with the plan and the results: a header carries them.
func (c *checker) baseURL(path, e, accepted string) {
	u, err := url.Parse(e)
	shown := e // never the password
	if err == nil && u.User != nil {
		shown = u.Redacted()
	}
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		c.bad(path, "%q is not a base URL (accepted: %s)", shown, accepted)
	case u.User != nil:
		c.bad(path, "%q holds credentials, which the plan and the results would show (accepted: %s, without them; send them as a header from the environment, such as Authorization: ${VAR})", shown, accepted)
	case u.RawQuery != "" || u.ForceQuery:
		c.bad(path, "%q has a query, after which the request's path would be appended (accepted: %s, without one; query values go in request.query or an arm's query)", e, accepted)
	case u.Fragment != "" || strings.Contains(e, "#"):
		c.bad(path, "%q has a fragment, after which the request's path would be appended (accepted: %s, without one)", e, accepted)
	case strings.Contains(e, "{key}") || strings.Contains(u.Path, "{key}"):
		c.bad(path, "%q has {key}, which a base URL sends as written (accepted: %s; {key} goes in the request's path, a query or header value, or its body)", e, accepted)
	default:
		if err := herd.CheckPort(u.Port()); err != nil {
			c.bad(path, "%q: %v", e, err)
		}
	}
}
