package initcmd

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/targets/starter"
)

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
func (o initOptions) keys(ctx context.Context, u *url.URL) (starter.Keys, error) {
	given, from := o.Keys, "--keys"
	if o.KeysFile != "" {
		keys, err := targets.ReadKeys(o.KeysFile)
		if err != nil {
			return starter.Keys{}, cli.UsageErrorf("--keys-file: %v (accepted: a file of keys, one a line)", err)
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
		tg, err := targets.FromURL(u.String())
		if err != nil {
			return starter.Keys{}, cli.UsageErrorf("--url: %v", err)
		}
		kept, err := starter.Probe(ctx, tg, given, probeTimeout)
		if err != nil {
			return starter.Keys{}, fmt.Errorf("--probe: %w", err)
		}
		if len(kept) == 0 {
			return starter.Keys{}, cli.UsageErrorf("--probe: none of the %d keys of %s answered 2xx to %s (accepted: keys the service has, by --keys or --keys-file)", len(given), from, u.Redacted())
		}
		return starter.Keys{List: kept, Hot: min(hotMax, len(kept)),
			From: fmt.Sprintf("the %d of %d keys of %s that answered 2xx to GET %s when herdbench init probed them", len(kept), len(given), from, u.Redacted())}, nil
	case o.KeysFile != "":
		return starter.Keys{File: relativeTo(o.File, o.KeysFile), Hot: min(hotMax, len(given)), From: "the keys of " + from}, nil
	case len(given) > 0:
		return starter.Keys{List: given, Hot: min(hotMax, len(given)), From: "the keys given to herdbench init (--keys)"}, nil
	}
	return starter.Keys{Hot: hotMax, From: "invented by herdbench init, not the service's"}, nil
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
