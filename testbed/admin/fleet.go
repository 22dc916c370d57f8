package admin

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"sync"
)

// Fleet is every replica of a testbed, in order.
type Fleet []*Client

// NewFleet returns clients of the replicas at urls.
func NewFleet(urls []string) Fleet {
	f := make(Fleet, len(urls))
	for i, u := range urls {
		f[i] = NewClient(u)
	}
	return f
}

// Config reads the first replica's run-time config, as JSON: every
// replica of an experiment has the same.
func (f Fleet) Config(ctx context.Context) (json.RawMessage, error) {
	if len(f) == 0 {
		return nil, errors.New("no replica")
	}
	return f[0].Config(ctx)
}

// SetConfig sets every replica's run-time config.
func (f Fleet) SetConfig(ctx context.Context, cfg json.Marshaler) error {
	for _, c := range f {
		if err := c.SetConfig(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}

// Patch sets the knobs p names on every replica, over the config each was
// started with, and returns the config the first runs now.
func (f Fleet) Patch(ctx context.Context, p Patch) (json.RawMessage, error) {
	var first json.RawMessage
	for i, c := range f {
		cfg, err := c.Patch(ctx, p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first = cfg
		}
	}
	return first, nil
}

// Reset resets every replica and seeds replica i with seed+i, so each
// draws its own numbers and a run replays from its seed.
func (f Fleet) Reset(ctx context.Context, seed uint64) error {
	for i, c := range f {
		if err := c.Reset(ctx, new(seed+uint64(i))); err != nil {
			return err
		}
	}
	return nil
}

// Fill caches the items from..to as misses would, each replica a share of
// them, all at once.
func (f Fleet) Fill(ctx context.Context, from, to int64) (FillResponse, error) {
	if len(f) == 0 || to < from {
		return FillResponse{}, nil
	}
	share := (to - from + int64(len(f))) / int64(len(f))
	res := make([]FillResponse, len(f))
	errs := make([]error, len(f))
	var wg sync.WaitGroup
	for i, c := range f {
		lo := from + int64(i)*share
		hi := min(lo+share-1, to)
		if lo > hi {
			continue
		}
		wg.Go(func() { res[i], errs[i] = c.Fill(ctx, lo, hi) })
	}
	wg.Wait()
	var sum FillResponse
	for _, r := range res {
		sum.Filled += r.Filled
		sum.Queries += r.Queries
	}
	return sum, errors.Join(errs...)
}

// Counters sums every replica's counters.
func (f Fleet) Counters(ctx context.Context) (Counters, error) {
	var sum Counters
	for _, c := range f {
		cs, err := c.Counters(ctx)
		if err != nil {
			return Counters{}, err
		}
		sum = sum.Plus(cs)
	}
	return sum, nil
}

// WriteLag is the queue's lag from acknowledgement to applied over the
// replicas' MetricWriteLag histograms, summed: how many writes it covers,
// and its median and 99th percentile, interpolated within their buckets
// as Prometheus' histogram_quantile does.
type WriteLag struct {
	Count int64   `json:"count"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// WriteLag reads every replica's write lag histogram and sums them.
func (f Fleet) WriteLag(ctx context.Context) (WriteLag, error) {
	var count uint64
	cum := map[float64]uint64{} // upper bound -> writes at or below it
	for _, c := range f {
		m, err := c.Metrics(ctx)
		if err != nil {
			return WriteLag{}, err
		}
		n, buckets := m.Histogram(MetricWriteLag)
		count += n
		for le, v := range buckets {
			cum[le] += v
		}
	}
	bounds := slices.Sorted(maps.Keys(cum))
	q := func(q float64) float64 {
		rank, lo, prev := q*float64(count), 0.0, uint64(0)
		for _, b := range bounds {
			if c := cum[b]; float64(c) >= rank && c > prev {
				return (lo + (b-lo)*(rank-float64(prev))/float64(c-prev)) * 1000
			}
			lo, prev = b, cum[b]
		}
		return lo * 1000 // past the last finite bucket: its bound, as Prometheus
	}
	if count == 0 {
		return WriteLag{}, nil
	}
	return WriteLag{Count: int64(count), P50MS: math.Round(q(0.5)*100) / 100, P99MS: math.Round(q(0.99)*100) / 100}, nil
}
