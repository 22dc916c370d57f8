package triggers

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
)

// Burst releases N clients at one instant, their connections already open,
// as cron jobs at :00 or a crowd at a door that opens: synchronized
// arrivals on top of the steady load. Every request is serialized before T
// and, at the release, written on its open connection by one writer loop
// per core, so the herd that reaches the service is as tight as this
// machine can make it; each request's departure is when its bytes were
// handed to the kernel, and the spread of those departures says how
// synchronized the herd really was.
type Burst struct {
	Clients int `json:"burst" help:"clients released at T, each with its connection open"`
}

// MaxBurst caps the clients a burst opens connections for.
const MaxBurst = 10_000

// NewBurst is a burst with its default: 1,000 clients.
func NewBurst() *Burst { return &Burst{Clients: 1000} }

// BurstResult is how far apart the released requests left: the results'
// burst.
type BurstResult struct {
	Clients     int   `json:"clients"`
	OK          int   `json:"ok"`
	SpreadP50US int64 `json:"spread_p50_us"`
	SpreadP99US int64 `json:"spread_p99_us"`
	// Departures are when each written request left after the release,
	// from which the spread is computed: bursts released by several
	// workers merge exactly (MergeBursts)
	Departures []time.Duration `json:"-"`
}

// NewBurstResult sums up a burst of clients, ok of them answered 2xx,
// from each written request's departure after its release.
func NewBurstResult(clients, ok int, departures []time.Duration) *BurstResult {
	res := &BurstResult{Clients: clients, OK: ok, Departures: slices.Sorted(slices.Values(departures))}
	if left := res.Departures; len(left) > 0 {
		res.SpreadP50US = left[len(left)/2].Microseconds()
		res.SpreadP99US = left[min(len(left)-1, len(left)*99/100)].Microseconds()
	}
	return res
}

// MergeBursts is one burst of the parts several workers released, each at
// T on its own clock: clients and answers add up, the spread is over every
// departure, each from its own release.
func MergeBursts(parts []*BurstResult) *BurstResult {
	var clients, ok int
	var left []time.Duration
	for _, p := range parts {
		clients, ok = clients+p.Clients, ok+p.OK
		left = append(left, p.Departures...)
	}
	return NewBurstResult(clients, ok, left)
}

// BurstDetail is burst's trigger detail: empty, its figures are the
// results' burst.
type BurstDetail struct{}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *BurstDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[BurstDetail]{})
}

var (
	_ Trigger  = (*Burst)(nil)
	_ Preparer = (*Burst)(nil)
	_ Requirer = (*Burst)(nil)
	_ Splitter = (*Burst)(nil)
	_ Sender   = (*Burst)(nil)
)

func (*Burst) Name() string { return "burst" }

// BurstClients is how many clients the burst releases, which workers
// share.
func (b *Burst) BurstClients() int { return b.Clients }

// Detail is an empty BurstDetail, into which results are read.
func (*Burst) Detail() any { return &BurstDetail{} }
func (b *Burst) Describe() string {
	return fmt.Sprintf("%d clients, connections open, released at T by a barrier: synchronized arrivals", b.Clients)
}

// Validate checks the number of clients, and that this process may open a
// connection for each.
func (b *Burst) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if b.Clients < 1 || b.Clients > MaxBurst {
		errs.Add("burst", "%d out of range (accepted: 1 to %d clients)", b.Clients, MaxBurst)
	} else if limit, ok := openFiles(); ok && uint64(b.Clients)+fileHeadroom > limit {
		errs.Add("burst", "%d clients need as many connections, and this process may open %d files (accepted: up to %d here; raise the hard limit, ulimit -Hn, to burst more: herdbench raises its soft limit to it)",
			b.Clients, limit, max(int(limit)-fileHeadroom, 0))
	}
	return errs
}

// openFiles is the process' limit on open files (Go raises the soft limit
// to the hard one at start), and whether it is known.
func openFiles() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Cur, true
}

// Sends is the requests released at T.
func (b *Burst) Sends() int { return b.Clients }

// Requires endpoints, which every target has.
func (*Burst) Requires(c Caps) error {
	if !c.Endpoints {
		return errors.New("endpoints")
	}
	return nil
}

func (b *Burst) Plan(env Env) string {
	keys := env.HotKeys
	if len(keys) == 0 {
		keys = []string{"1"}
	}
	return fmt.Sprintf("open %d TCP connections to the endpoints before T (no request), then send %d requests at T for the hot keys %s",
		b.Clients, b.Clients, list(keys))
}

// Fire opens the connections and releases them at once; a run prepares
// them before the load instead, so the opening takes no time at T.
func (b *Burst) Fire(ctx context.Context, env Env) (Fired, error) {
	a, err := b.Prepare(ctx, env)
	if err != nil {
		return Fired{}, err
	}
	defer a.Close()
	return a.Fire(ctx, env)
}

// Prepare opens one connection per client, spread over the endpoints, and
// serializes its request, without sending anything: the service sees no
// request before T.
func (b *Burst) Prepare(ctx context.Context, env Env) (Armed, error) {
	if len(env.API) == 0 {
		return nil, errors.New("burst: the target lists no endpoint")
	}
	build := env.Request
	if build == nil {
		build = ItemRequest
	}
	keys := env.HotKeys
	if len(keys) == 0 {
		keys = []string{"1"}
	}
	r, err := openRelease(ctx, "burst", b.Clients, env.API, keys, build)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// openRelease opens n clients' connections, spread over the endpoints in
// turn, each with its request for the keys in turn, serialized: nothing is
// sent before the release. It counts first what the connections need
// (preflight), and fails, naming what ran out, when a connection cannot
// be had; the caller is before T.
func openRelease(ctx context.Context, name string, n int, bases, keys []string, build Requester) (*release, error) {
	routes, err := preflight(ctx, name, n, bases)
	if err != nil {
		return nil, err
	}
	r := &release{clients: make([]burstClient, n)}
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	sem := make(chan struct{}, 64)
	for i := range r.clients {
		key, base := keys[i%len(keys)], bases[i%len(bases)]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if failed.Load() != nil {
				return // one failure fails the burst: open no more
			}
			if err := r.clients[i].open(ctx, base, key, routes[i], build); err != nil {
				err = fmt.Errorf("%s: client %d of %d: %w%s", name, i, n, err, dialHint(err))
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		r.Close()
		return nil, *err
	}
	return r, nil
}

// burstClient is one client of a burst: its open connection and its
// request, serialized.
type burstClient struct {
	conn net.Conn
	req  []byte
	sent bool          // its request was written
	left time.Duration // after the release, when it was
	took time.Duration // after the release, when its answer was read; 0 without one
	ok   bool          // the service answered 2xx
}

// open dials base by its route and serializes the request for key.
func (c *burstClient) open(ctx context.Context, base, key string, via route, build Requester) error {
	req, err := build(ctx, base, key)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		return fmt.Errorf("serialize the request: %w", err)
	}
	c.req = buf.Bytes()
	c.conn, err = dial(ctx, via)
	return err
}

// dial opens a connection by a route: TCP from its source address, if it
// has one, and TLS, its handshake done, for https.
func dial(ctx context.Context, via route) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if via.source.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: via.source.AsSlice()}
		d.Control = bindNoPort
	}
	if !via.tls {
		return d.DialContext(ctx, "tcp", via.dest.String())
	}
	td := &tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: via.serverName}}
	return td.DialContext(ctx, "tcp", via.dest.String())
}

// release is a burst whose connections are open, waiting for T.
type release struct {
	clients []burstClient
}

// burstTimeout bounds the wait for the released requests' answers.
const burstTimeout = 10 * time.Second

// Fire releases every client at once (send) and closes their connections.
func (r *release) Fire(ctx context.Context, _ Env) (Fired, error) {
	defer r.Close()
	r.send(ctx)
	return Fired{Detail: &BurstDetail{}, Burst: r.result(), Ended: time.Now()}, nil
}

// send releases every client at once: one writer per core writes its
// share of the serialized requests, back to back, then the answers are
// read. It returns when every client has its answer or gave up.
func (r *release) send(ctx context.Context) {
	writers := min(runtime.GOMAXPROCS(0), len(r.clients))
	share := (len(r.clients) + writers - 1) / writers
	gate := make(chan struct{})
	var parked, wrote sync.WaitGroup
	var released time.Time
	for w := range writers {
		mine := r.clients[min(w*share, len(r.clients)):min((w+1)*share, len(r.clients))]
		parked.Add(1)
		wrote.Go(func() {
			parked.Done()
			<-gate
			for i := range mine {
				c := &mine[i]
				_, err := c.conn.Write(c.req)
				c.left, c.sent = time.Since(released), err == nil
			}
		})
	}
	parked.Wait()
	released = time.Now()
	close(gate)
	wrote.Wait()
	r.answers(ctx, released)
}

// answers reads every client's answer, all at once, within burstTimeout or
// until ctx ends, noting when each came after the release.
func (r *release) answers(ctx context.Context, released time.Time) {
	deadline := time.Now().Add(burstTimeout)
	stop := context.AfterFunc(ctx, func() {
		for _, c := range r.clients {
			_ = c.conn.SetReadDeadline(time.Unix(1, 0))
		}
	})
	defer stop()
	var wg sync.WaitGroup
	for i := range r.clients {
		c := &r.clients[i]
		if !c.sent {
			continue
		}
		wg.Go(func() {
			_ = c.conn.SetReadDeadline(deadline)
			resp, err := http.ReadResponse(bufio.NewReader(c.conn), nil)
			if err != nil {
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			c.took = time.Since(released)
			c.ok = err == nil && resp.StatusCode/100 == 2
		})
	}
	wg.Wait()
}

// result is the release's spread: how long after the release each request
// that was written left.
func (r *release) result() *BurstResult {
	var ok int
	var left []time.Duration
	for _, c := range r.clients {
		if c.ok {
			ok++
		}
		if c.sent {
			left = append(left, c.left)
		}
	}
	return NewBurstResult(len(r.clients), ok, left)
}

// Close closes every connection Prepare opened.
func (r *release) Close() {
	for _, c := range r.clients {
		if c.conn != nil {
			c.conn.Close()
		}
	}
	r.clients = nil
}
