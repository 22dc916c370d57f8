package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/retry"
)

// Config is one steady attack.
type Config struct {
	Targets  []string      // replica base URLs, used round-robin
	Rate     int           // requests per second, open model
	Duration time.Duration // how long to attack
	Keys     int           // item ids 1..Keys
	Zipf     float64       // Zipf exponent s > 1: P(id) ∝ id^-s
	Seed     uint64        // seeds the key draws
	Timeout  time.Duration // client timeout per attempt
	Clients  int           // virtual clients sharing the load, each with its own retry state; 0 means 1
	Retry    retry.Policy  // what a client does after a failed attempt
	Budget   retry.Budget  // what bounds a client's retries
	Throttle float64       // adaptive throttling's K (the SRE book uses 2); 0 is off
	Hedge    retry.Hedge   // hedge slow attempts to another replica; zero is off
	Breaker  retry.Breaker // each client's own circuit breaker; zero is off
	// Critical is the share of requests marked critical (the X-Priority
	// header), chosen by a fixed hash of the request's sequence number
	Critical float64
	// MaxWorkers caps vegeta's concurrent requests; 0 leaves it unbounded,
	// so the generator keeps its schedule while the server stalls.
	MaxWorkers uint64
}

// Record is one request's end.
type Record struct {
	Seq      uint64
	Intended time.Time     // start + (Seq+1)/Rate, when the pacer schedules it
	Latency  time.Duration // from Intended to the end of the last attempt
	Outcome  Outcome       // the last attempt's
	Attempts int           // attempts sent, retries and hedges included; 0 when the client refused every one
	Hedges   int           // of Attempts, the hedged copies
	SentAt   []time.Time   // when each attempt left
	Code     int
	Cache    string // the X-Cache header, if any
	Critical bool   // sent with X-Priority: critical
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Targets) == 0 {
		errs = append(errs, errors.New("targets: none"))
	}
	if c.Rate < 1 {
		errs = append(errs, fmt.Errorf("rate: %d (accepted: 1 or more requests/s)", c.Rate))
	}
	if c.Keys < 1 {
		errs = append(errs, fmt.Errorf("keys: %d (accepted: 1 or more)", c.Keys))
	}
	if c.Zipf <= 1 {
		errs = append(errs, fmt.Errorf("zipf: %g (accepted: greater than 1)", c.Zipf))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration: %s (accepted: more than 0)", c.Duration))
	}
	if c.Critical < 0 || c.Critical > 1 {
		errs = append(errs, fmt.Errorf("critical: %g (accepted: 0 to 1, a share of requests)", c.Critical))
	}
	if c.Throttle < 0 {
		errs = append(errs, fmt.Errorf("throttle: %g (accepted: 0, off, or K above 0 such as 2)", c.Throttle))
	}
	if c.Clients < 0 {
		errs = append(errs, fmt.Errorf("clients: %d (accepted: 0 or more)", c.Clients))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout: %s (accepted: more than 0)", c.Timeout))
	}
	return errors.Join(errs...)
}

// criticalHeader marks a request that must be served (the testbed's
// shed_priority admits it first).
var criticalHeader = http.Header{"X-Priority": []string{"critical"}}

// isCritical says whether request i is one of the share marked critical: a
// fixed hash of i, so the same requests are critical in every arm.
func isCritical(i uint64, share float64) bool {
	return share > 0 && float64(mix(i)%10_000) < share*10_000
}

// Keys draws item ids from a seeded Zipf distribution. It is safe for
// concurrent use.
type Keys struct {
	mu   sync.Mutex
	zipf *rand.Zipf
}

// NewKeys returns ids in [1, n] with P(id) ∝ id^-s.
func NewKeys(n int, s float64, seed uint64) *Keys {
	r := rand.New(rand.NewPCG(seed, 0x6b657973)) // "keys"
	return &Keys{zipf: rand.NewZipf(r, s, 1, uint64(n-1))}
}

// Next returns the next id.
func (k *Keys) Next() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return int64(k.zipf.Uint64()) + 1
}

// Attack runs c until its duration ends or ctx is done, and hands every
// request's Record to record, from one goroutine, in completion order. It
// returns the time the schedule started: Record.Intended is measured from it.
func Attack(ctx context.Context, c Config, record func(Record)) (time.Time, error) {
	if err := c.Validate(); err != nil {
		return time.Time{}, err
	}
	keys := NewKeys(c.Keys, c.Zipf, c.Seed)
	var (
		mu sync.Mutex
		n  uint64
	)
	targeter := func(t *vegeta.Target) error {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		t.Method = http.MethodGet
		t.URL = c.Targets[i%uint64(len(c.Targets))] + "/items/" + strconv.FormatInt(keys.Next(), 10) +
			"?" + requestParam + "=" + strconv.FormatUint(i, 10)
		t.Header = nil
		if isCritical(i, c.Critical) {
			t.Header = criticalHeader
		}
		return nil
	}
	h := newHerd(c)
	// each attempt has the timeout; the whole request, retries included,
	// is bounded by vegeta's client timeout
	total := time.Duration(c.Retry.Retries+1)*c.Timeout + time.Duration(c.Retry.Retries)*max(c.Retry.Base, c.Retry.Cap)
	opts := []func(*vegeta.Attacker){vegeta.Client(&http.Client{Transport: h, Timeout: total})}
	if c.MaxWorkers > 0 {
		opts = append(opts, vegeta.Workers(min(c.MaxWorkers, vegeta.DefaultWorkers)), vegeta.MaxWorkers(c.MaxWorkers))
	}
	atk := vegeta.NewAttacker(opts...)
	interval := time.Second / time.Duration(c.Rate)
	pacer := vegeta.ConstantPacer{Freq: c.Rate, Per: time.Second}

	// vegeta's own start is a few microseconds later: intended times are
	// never after the real schedule. Its constant pacer sends hit k at
	// (k+1) intervals from its start (lib/pacer.go), not at k.
	start := time.Now()
	results := atk.Attack(targeter, pacer, c.Duration, "herdbench")
	stopped := make(chan struct{})
	defer close(stopped)
	go func() { // vegeta's Attack takes no context
		select {
		case <-ctx.Done():
			atk.Stop()
		case <-stopped:
		}
	}()
	for res := range results {
		intended := start.Add(time.Duration(res.Seq+1) * interval)
		lat := res.End().Sub(intended)
		if lat < 0 {
			lat = 0
		}
		rec := Record{Seq: res.Seq, Intended: intended, Latency: lat, Code: int(res.Code),
			Outcome: Classify(int(res.Code), res.Error)}
		if u, err := url.Parse(res.URL); err == nil {
			id, _ := strconv.ParseUint(u.Query().Get(requestParam), 10, 64)
			s := h.takeAttempts(id)
			rec.SentAt, rec.Attempts, rec.Hedges = s.at, len(s.at), s.hedges
			rec.Critical = isCritical(id, c.Critical)
		}
		if res.Headers != nil {
			rec.Cache = res.Headers.Get("X-Cache")
		}
		record(rec)
	}
	h.base.CloseIdleConnections() // each arm starts with its own connections
	return start, ctx.Err()
}
