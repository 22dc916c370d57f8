package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// startKeys are the keys init writes, and where they came from.
type startKeys struct {
	From string   // a sentence: where they came from, written above them
	List []string // the keys, as a list; nil with File or an invented range
	File string   // a file of keys, relative to the target file
	Hot  int      // how many of them are hot
}

// Invented says whether the keys are init's invention, for the
// template's advice to replace them.
func (k startKeys) Invented() bool { return k.List == nil && k.File == "" }

// Quote is a key as a YAML double-quoted string.
func (startKeys) Quote(s string) string { return strconv.Quote(s) }

const (
	// probeDefault is how many keys --probe tries without --keys or
	// --keys-file: 1 to probeDefault
	probeDefault = 100
	// probeMax bounds the keys --probe sends a request for
	probeMax = 1000
	// probeTimeout bounds each of its requests
	probeTimeout = 5 * time.Second
	// hotMax is the most hot keys init writes
	hotMax = 100
)

// checkKeys checks the keys' flags, adding to bad.
func (o initOptions) checkKeys(bad *herd.FieldErrors) {
	if len(o.Keys) > 0 && o.KeysFile != "" {
		bad.Add("keys", "beside --keys-file (accepted: one of --keys or --keys-file)")
	}
	for i, k := range o.Keys {
		if k == "" {
			bad.Add("keys", "key %d empty (accepted: keys separated by commas, such as 42,43,sku-1)", i+1)
		}
	}
	if o.KeysFile != "" {
		if keys, err := targets.ReadKeys(o.KeysFile); err != nil {
			bad.Add("keys-file", "%v (accepted: a file of keys, one a line)", err)
		} else if o.Probe && len(keys) > probeMax {
			bad.Add("keys-file", "%d keys to --probe (accepted: at most %d)", len(keys), probeMax)
		}
	}
	if o.Probe && len(o.Keys) > probeMax {
		bad.Add("keys", "%d keys to --probe (accepted: at most %d)", len(o.Keys), probeMax)
	}
}

// keys are the keys the file is written with: those given, those of them
// (or of 1 to probeDefault) that answer u with 2xx when o.Probe, or an
// invented range.
func (o initOptions) keys(ctx context.Context, u *url.URL) (startKeys, error) {
	given, from := o.Keys, "--keys"
	if o.KeysFile != "" {
		keys, err := targets.ReadKeys(o.KeysFile)
		if err != nil {
			return startKeys{}, usageErrorf("--keys-file: %v (accepted: a file of keys, one a line)", err)
		}
		given, from = keys, o.KeysFile+" (--keys-file)"
	}
	switch {
	case o.Probe:
		if given == nil {
			for i := 1; i <= probeDefault; i++ {
				given = append(given, strconv.Itoa(i))
			}
			from = fmt.Sprintf("1 to %d", probeDefault)
		}
		kept, err := probe(ctx, u, given)
		if err != nil {
			return startKeys{}, err
		}
		if len(kept) == 0 {
			return startKeys{}, usageErrorf("--probe: none of the %d keys of %s answered 2xx to %s (accepted: keys the service has, by --keys or --keys-file)", len(given), from, u.Redacted())
		}
		return startKeys{List: kept, Hot: min(hotMax, len(kept)),
			From: fmt.Sprintf("the %d of %d keys of %s that answered 2xx to GET %s when herdbench init probed them", len(kept), len(given), from, u.Redacted())}, nil
	case o.KeysFile != "":
		return startKeys{File: relativeTo(o.File, o.KeysFile), Hot: min(hotMax, len(given)), From: "the keys of " + from}, nil
	case len(given) > 0:
		return startKeys{List: given, Hot: min(hotMax, len(given)), From: "the keys given to herdbench init (--keys)"}, nil
	}
	return startKeys{Hot: hotMax, From: "invented by herdbench init, not the service's"}, nil
}

// probe sends one request of u's for each key, a few at a time, and
// keeps those that answer 2xx, in their order.
func probe(ctx context.Context, u *url.URL, keys []string) ([]string, error) {
	tg, err := targets.FromURL(u.String())
	if err != nil {
		return nil, usageErrorf("--url: %v", err)
	}
	client := load.NewClient(probeTimeout, nil)
	ok := make([]bool, len(keys))
	var mu sync.Mutex
	var firstErr error
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4) // a few at a time: a probe, not a load
	for i, key := range keys {
		g.Go(func() error {
			req, err := tg.NewRequest(gctx, tg.Endpoints[0], key)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
				return nil
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ok[i] = resp.StatusCode >= 200 && resp.StatusCode < 300
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var kept []string
	for i, k := range keys {
		if ok[i] {
			kept = append(kept, k)
		}
	}
	if len(kept) == 0 && firstErr != nil {
		return nil, fmt.Errorf("--probe: %w", firstErr)
	}
	return kept, nil
}

// relativeTo is path as the target file at file reads it: relative to
// its directory when it can be.
func relativeTo(file, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(dir, abs); err == nil {
		return rel
	}
	return abs
}
