package load

import (
	"net/http"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// targeter makes each of vegeta's hits its request: the next key drawn
// from the seeded key source, on the endpoints in turn. Requests whose
// headers do not depend on the key share one prepared header, which
// vegeta copies into each request it makes.
//
// The keys are drawn in the order vegeta asks for targets, which is the
// order its workers took their hits: the sequence of keys is the seed's,
// and two hits taken in the same instant may swap theirs.
type targeter struct {
	keys   KeySource
	req    Request
	urls   []func(key string) string
	header http.Header // the config's own, for templated headers
	plain  http.Header
	next   atomic.Uint64 // the endpoint's turn
}

func newTargeter(c Config) vegeta.Targeter {
	t := &targeter{keys: c.Source, req: c.Request.orDefault(), header: c.Header}
	if t.keys == nil {
		t.keys = NewKeys(c.Keys, c.Zipf, c.Seed)
	}
	for _, base := range c.Targets {
		t.urls = append(t.urls, t.req.urlFunc(base, c.Query))
	}
	t.plain = c.Header.Clone()
	return t.target
}

// target is the Targeter: the next hit's method, URL and headers.
func (t *targeter) target(tgt *vegeta.Target) error {
	key := t.keys.Key()
	tgt.Method = t.req.Method
	tgt.URL = t.urls[(t.next.Add(1)-1)%uint64(len(t.urls))](key)
	if len(t.req.Headers) > 0 {
		tgt.Header = t.req.Header(key, t.header)
	} else {
		tgt.Header = t.plain
	}
	return nil
}
