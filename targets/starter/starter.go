// Package starter writes a starter target file for a service herdbench
// has not seen yet (herdbench init): the file's values and its template,
// and the keys it is written with, given or probed from the service. The
// file passes its own dry run as written; a placeholder left in it (a
// user, a statement filter, a cache key) stops the run before T when it
// reads nothing (docs/targets.md, "Nothing read is a refusal").
package starter

import (
	"cmp"
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// File is what the template writes.
type File struct {
	Name, Endpoint, Path              string
	Query                             map[string]string
	Allow                             string // the hosts named that are not loopback, comma-separated
	Redis, Memcached, Postgres, MySQL string
	DBUser, Statements                string // "" leaves the placeholder
	CacheKey                          string
	Keys                              Keys
}

// Pattern is the Redis glob of the cache key's keys: its {key} a *.
func (f File) Pattern() string { return strings.ReplaceAll(f.CacheKey, "{key}", "*") }

// Write writes the target file f describes to w.
func (f File) Write(w io.Writer) error { return tmpl.Execute(w, f) }

// Keys are the keys the file is written with, and where they came from.
type Keys struct {
	From string   // a sentence: where they came from, written above them
	List []string // the keys, as a list; nil with File or an invented range
	File string   // a file of keys, relative to the target file
	Hot  int      // how many of them are hot
}

// Invented says whether the keys are init's invention, for the
// template's advice to replace them.
func (k Keys) Invented() bool { return k.List == nil && k.File == "" }

// Quote is a key as a YAML double-quoted string.
func (Keys) Quote(s string) string { return strconv.Quote(s) }

// Probe sends one request of tg's for each key, a few at a time, each
// within timeout, and keeps those that answer 2xx, in their order. When
// none did and a request failed, the first failure is the error.
func Probe(ctx context.Context, tg *targets.Target, keys []string, timeout time.Duration) ([]string, error) {
	client := load.NewClient(timeout, nil)
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
		return nil, firstErr
	}
	return kept, nil
}
