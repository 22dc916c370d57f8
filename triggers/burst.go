package triggers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Burst releases N clients at one instant, their connections already open,
// as cron jobs at :00 or a crowd at a door that opens: synchronized
// arrivals on top of the steady load. Each client measures when its request
// actually left (its headers were written) after the release, and the
// spread of those departures says how synchronized the herd really was.
type Burst struct {
	Clients int
	clients []*http.Client              // one open connection each, from Prepare
	bases   []string                    // the endpoint each client's connection is to
	dialed  []*atomic.Pointer[net.Conn] // each client's connection until its transport takes it
}

// BurstResult is how far apart the released requests left.
type BurstResult struct {
	Clients     int   `json:"clients"`
	OK          int   `json:"ok"`
	SpreadP50US int64 `json:"spread_p50_us"`
	SpreadP99US int64 `json:"spread_p99_us"`
}

var (
	_ Trigger  = (*Burst)(nil)
	_ Preparer = (*Burst)(nil)
	_ Releaser = (*Burst)(nil)
	_ Requirer = (*Burst)(nil)
)

// Requires endpoints, which every target has.
func (*Burst) Requires(c Caps) error {
	if !c.Endpoints {
		return errors.New("endpoints")
	}
	return nil
}

func (*Burst) Name() string { return "burst" }
func (b *Burst) Describe() string {
	return fmt.Sprintf("%d clients, connections open, released at T by a barrier: synchronized arrivals", b.Clients)
}

// Prepare opens one TCP connection per client, spread over the endpoints,
// without sending anything: the service sees no request before T.
func (b *Burst) Prepare(ctx context.Context, env Env) error {
	if len(env.API) == 0 {
		return fmt.Errorf("burst: the target lists no endpoint")
	}
	b.closeAll()
	b.clients = make([]*http.Client, b.Clients)
	b.bases = make([]string, b.Clients)
	conns := make([]net.Conn, b.Clients)
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	sem := make(chan struct{}, 64)
	for i := range b.clients {
		b.bases[i] = env.API[i%len(env.API)]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := dialBase(ctx, b.bases[i])
			if err != nil {
				select {
				case errc <- fmt.Errorf("burst: open connection %d: %w", i, err):
				default:
				}
				return
			}
			conns[i] = c
		})
	}
	wg.Wait()
	b.dialed = make([]*atomic.Pointer[net.Conn], len(b.clients))
	for i := range b.clients {
		once := new(atomic.Pointer[net.Conn])
		if conns[i] != nil {
			once.Store(&conns[i])
		}
		b.dialed[i] = once
		dialer := &net.Dialer{Timeout: 10 * time.Second}
		b.clients[i] = &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirects, Transport: &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if c := once.Swap(nil); c != nil { // the connection Prepare opened, first
					return *c, nil
				}
				return dialer.DialContext(ctx, network, addr)
			}}}
	}
	select {
	case err := <-errc:
		b.closeAll()
		return err
	default:
		return nil
	}
}

// noRedirects keeps a burst on the endpoints it was planned for.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// dialBase opens a TCP connection to a base URL's host.
func dialBase(ctx context.Context, base string) (net.Conn, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	return (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "tcp", host)
}

// Fire releases every client at once and waits for their answers.
func (b *Burst) Fire(ctx context.Context, env Env) (Detail, error) {
	defer b.closeAll()
	if len(b.clients) == 0 {
		return nil, fmt.Errorf("burst: no connections open (Prepare did not run)")
	}
	release := make(chan struct{})
	var released time.Time
	var parked, done sync.WaitGroup
	var mu sync.Mutex
	var left []time.Duration // of the requests that left
	ok := make([]bool, len(b.clients))
	for i, c := range b.clients {
		parked.Add(1)
		done.Go(func() {
			key := "1"
			if len(env.HotKeys) > 0 {
				key = env.HotKeys[i%len(env.HotKeys)]
			}
			var wrote atomic.Int64 // the transport may call back from its own goroutine
			trace := &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(time.Now().UnixNano()) }}
			build := env.Request
			if build == nil {
				build = ItemRequest
			}
			req, err := build(httptrace.WithClientTrace(ctx, trace), b.bases[i], key)
			parked.Done()
			<-release
			if err == nil {
				err = do(c, req)
			}
			ok[i] = err == nil
			if w := wrote.Load(); w != 0 {
				mu.Lock()
				left = append(left, time.Unix(0, w).Sub(released))
				mu.Unlock()
			}
		})
	}
	parked.Wait()
	released = time.Now()
	close(release)
	done.Wait()
	res := BurstResult{Clients: len(b.clients)}
	for _, v := range ok {
		if v {
			res.OK++
		}
	}
	if len(left) > 0 {
		slices.Sort(left)
		res.SpreadP50US = left[len(left)/2].Microseconds()
		res.SpreadP99US = left[min(len(left)-1, len(left)*99/100)].Microseconds()
	}
	return Detail{"burst": res}, nil
}

// Release closes the connections Prepare opened, when Fire never ran.
func (b *Burst) Release() { b.closeAll() }

// closeAll closes every connection Prepare opened: the transports' idle
// ones, and those no transport took (Fire never ran).
func (b *Burst) closeAll() {
	for _, c := range b.clients {
		c.CloseIdleConnections()
	}
	for _, d := range b.dialed {
		if c := d.Swap(nil); c != nil {
			(*c).Close()
		}
	}
	b.clients, b.bases, b.dialed = nil, nil, nil
}

// do sends req and reads the answer; a status other than 200 is an error.
func do(c *http.Client, req *http.Request) error {
	url := req.URL.String()
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
