package load

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// targeter makes each of vegeta's hits its request: the next class of
// the mix (one, without Config.Classes), the next key drawn from that
// class's seeded key source, on the endpoints in turn. Requests whose
// headers do not depend on the key share one prepared header, which
// vegeta copies into each request it makes.
//
// The keys are drawn in the order vegeta asks for targets, which is the
// order its workers took their hits: the sequence of keys is the seed's,
// and two hits taken in the same instant may swap theirs.
type targeter struct {
	classes []classTarget
	mix     *mixer        // nil: one class
	next    atomic.Uint64 // the endpoint's turn
}

// classTarget is one class's request, put together once.
type classTarget struct {
	req    Request
	keys   KeySource // nil: its request takes no key
	urls   []func(key string) string
	header http.Header // the config's own, for templated headers
	plain  http.Header // the whole header, when no value takes the key
	body   func(key string) []byte
	// fixed are a class of vegeta targets, whole, each with the config's
	// headers and query added; turn is the next one's
	fixed []vegeta.Target
	turn  *atomic.Uint64
}

func newTargeter(c Config) vegeta.Targeter {
	keys := c.Source
	if keys == nil {
		keys = NewKeys(c.Keys, c.Zipf, c.Seed)
	}
	classes := c.Classes
	if len(classes) == 0 {
		classes = []Class{{Weight: 1, Request: c.Request}}
	}
	t := &targeter{}
	if len(classes) > 1 {
		t.mix = newMixer(classes, c.Stripe, c.Stripes)
	}
	for i, cl := range classes {
		ct := classTarget{req: cl.Request.orDefault(), header: c.Header.Clone()}
		if ct.header == nil {
			ct.header = http.Header{}
		}
		if t.mix != nil {
			ct.header.Set(classHeader, strconv.Itoa(i))
		}
		if ct.req.TakesKey() {
			ct.keys = cmp.Or(cl.Source, keys)
		}
		for _, base := range c.Targets {
			ct.urls = append(ct.urls, ct.req.urlFunc(base, c.Query))
		}
		ct.plain = ct.header
		ct.body = ct.req.bodyFunc()
		if len(cl.Targets) > 0 {
			ct.fixed, ct.turn, ct.keys = prepared(cl.Targets, ct.header, c.Query), &atomic.Uint64{}, nil
		}
		t.classes = append(t.classes, ct)
	}
	return t.target
}

// target is the Targeter: the next hit's method, URL, headers and body.
func (t *targeter) target(tgt *vegeta.Target) error {
	ct := &t.classes[0]
	if t.mix != nil {
		ct = &t.classes[t.mix.next()]
	}
	if ct.fixed != nil {
		*tgt = ct.fixed[(ct.turn.Add(1)-1)%uint64(len(ct.fixed))]
		return nil
	}
	key := ""
	if ct.keys != nil {
		key = ct.keys.Key()
	}
	tgt.Method = ct.req.Method
	tgt.URL = ct.urls[(t.next.Add(1)-1)%uint64(len(ct.urls))](key)
	if len(ct.req.Headers) > 0 {
		tgt.Header = ct.req.Header(key, ct.header)
	} else {
		tgt.Header = ct.plain
	}
	tgt.Body = nil
	if ct.body != nil {
		tgt.Body = ct.body(key)
	}
	return nil
}

// TakesKey says whether the request's path, query, headers or body hold
// {key}.
func (r Request) TakesKey() bool {
	if strings.Contains(r.Path, "{key}") || strings.Contains(r.Body, "{key}") {
		return true
	}
	for _, m := range []map[string]string{r.Query, r.Headers} {
		for _, v := range m {
			if strings.Contains(v, "{key}") {
				return true
			}
		}
	}
	return false
}

// bodyFunc is the request's body for a key; nil without a body.
func (r Request) bodyFunc() func(key string) []byte {
	switch {
	case r.Body == "":
		return nil
	case !strings.Contains(r.Body, "{key}"):
		b := []byte(r.Body) // read-only: vegeta reads it into each request
		return func(string) []byte { return b }
	}
	return func(key string) []byte { return []byte(strings.ReplaceAll(r.Body, "{key}", key)) }
}

// prepared are vegeta's targets ts as the load sends them: each with the
// config's headers (header: the target's, an arm's, the class's note)
// under its own, and the config's query values (an arm's) added.
func prepared(ts []vegeta.Target, header http.Header, query url.Values) []vegeta.Target {
	out := make([]vegeta.Target, len(ts))
	for i, t := range ts {
		h := header.Clone()
		maps.Copy(h, t.Header)
		t.Header = h
		if len(query) > 0 {
			if u, err := url.Parse(t.URL); err == nil {
				q := u.Query()
				for k, vs := range query {
					q[k] = append(q[k], vs...)
				}
				u.RawQuery = q.Encode()
				t.URL = u.String()
			}
		}
		out[i] = t
	}
	return out
}
