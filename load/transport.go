package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// transport is the generator's HTTP/1.1 client: the request is written and
// its answer read by the goroutine that sends it, on a kept-alive
// connection of its own, with net/http's own serializer (Request.Write) and
// parser (ReadResponse). http.Transport hands each request to a writer
// goroutine and its answer back from a reader goroutine per connection, and
// wakes the reader again when the body is read: three hand-offs a request,
// each of which, on a 2-core VM with the other core idle, wakes a thread.
// Here the only wakes are the poller's, when the answer arrives.
//
// What it keeps of http.Transport's behaviour: connections kept alive and
// reused, most recently used first; the request's context bounds it (its
// deadline is the connection's, its cancellation closes the connection); a
// request that fails on a reused connection before an answer began (the
// server closed it while idle) is sent again once on a new one, when it is
// idempotent or nothing of it was written; HTTP/1.1 over TLS for https.
// Not kept, as herdbench's transport never used them: proxies, HTTP/2,
// compression negotiation, redirects.
type transport struct {
	dialer *net.Dialer

	mu     sync.Mutex
	idle   map[string][]*conn // by scheme and host
	closed bool               // CloseIdleConnections was called: keep none
}

// maxIdlePerHost bounds the idle connections kept per host, as vegeta's
// default did: connections are reused, not a limit.
const maxIdlePerHost = 10_000

func newTransport(timeout time.Duration) *transport {
	return &transport{dialer: &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}, idle: map[string][]*conn{}}
}

// conn is one kept-alive connection.
type conn struct {
	net.Conn
	key string
	br  *bufio.Reader
	bw  *bufio.Writer
}

// RoundTrip sends req and reads its answer's header; the body is read
// from the connection, which returns to the idle ones at its end.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := req.URL.Scheme + "://" + req.URL.Host
	c, reused := t.take(key)
	for {
		if c == nil {
			var err error
			if c, err = t.dial(req.Context(), key, req); err != nil {
				return nil, err
			}
		}
		resp, wrote, err := c.exchange(t, req)
		if err == nil {
			return resp, nil
		}
		c.Close()
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if !reused || (wrote && !idempotent(req)) {
			return nil, err
		}
		c, reused = nil, false // the server closed it while it was idle: once more, on a new one
	}
}

// exchange writes req on c and reads its answer's header, within the
// request's context; wrote says whether any of the request was written.
func (c *conn) exchange(t *transport, req *http.Request) (*http.Response, bool, error) {
	ctx := req.Context()
	deadline, _ := ctx.Deadline() // none: the zero time, no deadline
	if err := c.SetDeadline(deadline); err != nil {
		return nil, false, err
	}
	stop := kept
	if ctx.Done() != nil { // a context that can end before its deadline is watched
		stop = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	}
	err := req.Write(c.bw)
	wrote := c.bw.Buffered() > 0 || err == nil
	if err == nil {
		err = c.bw.Flush()
	}
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(c.br, req)
	}
	if err != nil {
		stop()
		return nil, wrote, err
	}
	resp.Body = &body{ReadCloser: resp.Body, c: c, t: t, stop: stop, keep: !resp.Close && !req.Close}
	return resp, true, nil
}

// idempotent says whether req may be sent twice.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// take is the most recently used idle connection to key, and whether there
// was one.
func (t *transport) take(key string) (*conn, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[key]
	if len(cs) == 0 {
		return nil, false
	}
	c := cs[len(cs)-1]
	cs[len(cs)-1] = nil
	t.idle[key] = cs[:len(cs)-1]
	return c, true
}

// put keeps c for the next request to its host, or closes it.
func (t *transport) put(c *conn) {
	t.mu.Lock()
	if cs := t.idle[c.key]; !t.closed && len(cs) < maxIdlePerHost {
		t.idle[c.key] = append(cs, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// dial opens a connection to req's host: TCP, and TLS for https.
func (t *transport) dial(ctx context.Context, key string, req *http.Request) (*conn, error) {
	host := req.URL.Host
	if req.URL.Port() == "" {
		port := "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(req.URL.Hostname(), port)
	}
	nc, err := t.dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	if at, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(at) // the handshake's
	}
	if req.URL.Scheme == "https" {
		tc := tls.Client(nc, &tls.Config{ServerName: req.URL.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	return &conn{Conn: nc, key: key, br: bufio.NewReader(nc), bw: bufio.NewWriter(nc)}, nil
}

// CloseIdleConnections closes the connections no request is using, and
// those that requests still under way (a hedge's loser) give back later.
func (t *transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = map[string][]*conn{}, true
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.Close()
		}
	}
}

// body is an answer's body: read to its end, its connection goes back to
// the idle ones; closed before, the connection is closed.
type body struct {
	io.ReadCloser
	c    *conn
	t    *transport
	stop func() bool // ends the context's hold on the connection
	keep bool        // the connection may carry another request
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.finish(errors.Is(err, io.EOF))
	}
	return n, err
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.finish(false)
	return err
}

// finish hands the connection back once: kept when the body ended cleanly,
// the connection may be kept, and its context never fired.
func (b *body) finish(eof bool) {
	if b.done {
		return
	}
	b.done = true
	if b.stop() && eof && b.keep {
		b.t.put(b.c)
		return
	}
	b.c.Close()
}

// kept is the stop of a context nothing watches: the connection is the
// request's to keep.
func kept() bool { return true }

// deadline is the context of a request that nothing but its deadline ends
// (the generator's own): the connection's deadline enforces it, so it
// needs no timer of its own and nothing watches it. It is never cancelled
// (Done and Err are nil, as for a context that cannot be); Deadline is
// the instant its request must be over by.
type deadline struct{ at time.Time }

func (d *deadline) Deadline() (time.Time, bool) { return d.at, true }
func (*deadline) Done() <-chan struct{}         { return nil }
func (*deadline) Err() error                    { return nil }
func (*deadline) Value(any) any                 { return nil }
