package main

import (
	"slices"
	"strings"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
)

// atAxis tells a problem of a swept magnitude the command line never set
// as its axis's (--vary or --grid): baseOnAxes set it to the axis's first
// value, and the user gave no such flag.
func atAxis(err error, opts sweepOptions) error {
	fe := herd.Fields(cli.UnwrapUsage(err))
	axes := map[string][2]string{} // magnitude: its flag and spec
	for _, a := range append([]string{opts.Vary}, opts.Grid...) {
		if name, _, ok := strings.Cut(a, "="); ok {
			flag := "grid"
			if a == opts.Vary {
				flag = "vary"
			}
			axes[name] = [2]string{flag, a}
		}
	}
	told := false
	for i, e := range fe {
		ax, swept := axes[e.Field]
		if _, given := opts.Given[strings.ReplaceAll(e.Field, "_", "-")]; swept && !given && e.File == "" {
			c := *e
			c.Field, c.Elem = ax[0], ax[1]
			fe[i], told = &c, true
		}
	}
	if !told || slices.Contains(fe, nil) {
		return err
	}
	return cli.UsageError{Err: fe}
}
