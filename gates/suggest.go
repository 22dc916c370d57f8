package gates

import (
	"fmt"
	"slices"
	"strings"
)

// ContractDoc is where every path a gate may name is listed, with its
// source and window.
const ContractDoc = `docs/stampede.md, "The results contract"`

// Accepted says which paths a gate on path, which is none of paths, may
// name instead: all of them when they are few (a stop condition's live
// figures, which no page lists apart); else the nearest few (by edits,
// on the whole path or its last part, nearer in the same group) and where
// the rest are.
func Accepted(path string, paths []string) string {
	const few = 24
	if len(paths) <= few {
		return "accepted: " + strings.Join(paths, ", ")
	}
	return fmt.Sprintf("nearest: %s; all %d paths: %s", strings.Join(Nearest(path, paths, 3), ", "), len(paths), ContractDoc)
}

// Nearest are at most n of paths nearest to path, nearest first, in
// paths' order among equals.
func Nearest(path string, paths []string, n int) []string {
	type scored struct {
		p string
		d int
	}
	last := func(s string) string { return s[strings.LastIndex(s, ".")+1:] }
	first := func(s string) string { return s[:max(strings.Index(s, "."), 0)] }
	all := make([]scored, len(paths))
	for i, p := range paths {
		whole, prefix := edits(path, p)
		tail, _ := edits(last(path), last(p))
		d := min(whole, prefix+1, tail+1)
		if strings.Contains(p, path) || strings.Contains(path, p) {
			d = min(d, 1)
		}
		if f := first(path); f != "" && f == first(p) { // the same group: db.*
			d = max(d-2, 0)
		}
		all[i] = scored{p, d}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.d - b.d })
	out := make([]string, 0, n)
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.p)
	}
	return out
}

// edits is the Levenshtein distance of a and b, and the least distance
// of a to a prefix of b (db.queries to db.queries_total: 0).
func edits(a, b string) (whole, prefix int) {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev = cur
	}
	return prev[len(b)], slices.Min(prev)
}
