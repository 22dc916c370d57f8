package triggers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
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
	clients []*http.Client // one open connection each, from Prepare
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
)

func (*Burst) Name() string { return "burst" }
func (b *Burst) Describe() string {
	return fmt.Sprintf("%d clients, connections open, released at T by a barrier: synchronized arrivals", b.Clients)
}

// Prepare opens one connection per client, spread over the replicas.
func (b *Burst) Prepare(ctx context.Context, env Env) error {
	if len(env.API) == 0 {
		return fmt.Errorf("burst: the target lists no endpoint")
	}
	b.closeAll()
	b.clients = make([]*http.Client, b.Clients)
	for i := range b.clients {
		b.clients[i] = &http.Client{Timeout: 10 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}}
	}
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	sem := make(chan struct{}, 64)
	for i, c := range b.clients {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := get(ctx, c, env.API[i%len(env.API)]+"/healthz"); err != nil {
				select {
				case errc <- fmt.Errorf("burst: open connection %d: %w", i, err):
				default:
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errc:
		b.closeAll()
		return err
	default:
		return nil
	}
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
			id := int64(1)
			if len(env.HotKeys) > 0 {
				id = env.HotKeys[i%len(env.HotKeys)]
			}
			url := env.API[i%len(env.API)] + "/items/" + strconv.FormatInt(id, 10)
			var wrote atomic.Int64 // the transport may call back from its own goroutine
			trace := &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(time.Now().UnixNano()) }}
			parked.Done()
			<-release
			err := get(httptrace.WithClientTrace(ctx, trace), c, url)
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

func (b *Burst) closeAll() {
	for _, c := range b.clients {
		c.CloseIdleConnections()
	}
	b.clients = nil
}

// get sends a GET and reads the answer; a status other than 200 is an error.
func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
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
