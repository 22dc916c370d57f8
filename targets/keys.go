package targets

import (
	"fmt"
	"strconv"

	"github.com/herdbench/herdbench/herd"
)

// MaxKeys bounds a key space.
const MaxKeys = 1 << 31

// keys checks the key space: exactly one source, and a hot count within
// it. A file of keys is read now.
func (c *checker) keys() { c.keySpace("keys", &c.f.Keys) }

// keySpace checks the key space at path, and reads its file of keys.
func (c *checker) keySpace(path string, ks *KeySpace) {
	f := c.f
	k := *ks
	n := 0
	for _, set := range []bool{len(k.List) > 0, k.File != "", k.Range != nil, k.Zipf != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		c.bad(path, "%d sources of keys (accepted: exactly one of list, file, range, zipf)", n)
		return
	}
	size := int64(len(k.List))
	switch {
	case len(k.List) > 0:
		c.keyList(path+".list", k.List)
	case k.File != "":
		keys, err := ReadKeys(f.resolve(k.File))
		if err != nil {
			c.bad(path+".file", "%v (accepted: a file of keys, one per line)", err)
		}
		k.List, size = keys, int64(len(keys))
	case k.Range != nil:
		if !c.bounds(path+".range", k.Range.From, k.Range.To, true) {
			return
		}
		size = k.Range.To - k.Range.From + 1
	case k.Zipf != nil:
		if !c.bounds(path+".zipf", k.Zipf.From, k.Zipf.To, false) {
			return
		}
		switch {
		case f.doc.Line(path+".zipf.s") == 0:
			c.bad(path+".zipf.s", "no s (accepted: the exponent, greater than 1, such as 1.1)")
		case !herd.Finite(k.Zipf.S) || k.Zipf.S <= 1:
			c.bad(path+".zipf.s", "s %g (accepted: greater than 1)", k.Zipf.S)
		}
		size = k.Zipf.To - k.Zipf.From + 1
	}
	// 0 would silently mean --hot-keys: leaving the key out says that
	if k.Hot < 0 || int64(k.Hot) > size || (k.Hot == 0 && f.doc.Line(path+".hot") > 0) {
		c.bad(path+".hot", "%d (accepted: 1 to the key space's %d keys; no hot: for --hot-keys)", k.Hot, size)
	}
	*ks = k
}

// bounds checks a range's from and to at path, each given (a missing one
// would be a phantom 0); equal only when same. It says whether they hold.
func (c *checker) bounds(path string, from, to int64, same bool) bool {
	accepted := fmt.Sprintf("0 <= from < to, at most %d keys", MaxKeys)
	if same {
		accepted = fmt.Sprintf("0 <= from <= to, at most %d keys", MaxKeys)
	}
	ok := true
	for _, b := range []string{"from", "to"} {
		if c.f.doc.Line(path+"."+b) == 0 {
			c.bad(path+"."+b, "no %s (accepted: whole numbers from and to, %s)", b, accepted)
			ok = false
		}
	}
	if ok && (from < 0 || to < from || (to == from && !same) || to-from >= MaxKeys) {
		c.bad(path, "from %d to %d (accepted: %s)", from, to, accepted)
		ok = false
	}
	return ok
}

// keyList checks a list of keys at path: each given, and once (a second
// would be drawn twice as often, and count once as a hot key).
func (c *checker) keyList(path string, keys []string) {
	seen := map[string]int{}
	for i, key := range keys {
		at := fmt.Sprintf("%s[%d]", path, i)
		if key == "" {
			c.bad(at, "empty (accepted: a key, such as 42 or sku-1; or leave it out)")
			continue
		}
		if first, twice := seen[key]; twice {
			c.bad(at, "%q twice, first at %s[%d] (accepted: each key once)", key, path, first)
			continue
		}
		seen[key] = i
	}
}

// sampleKey is a key of ks, for checking what a key becomes: its first.
func sampleKey(ks KeySpace) string {
	switch {
	case len(ks.List) > 0:
		return ks.List[0]
	case ks.Range != nil:
		return strconv.FormatInt(ks.Range.From, 10)
	case ks.Zipf != nil:
		return strconv.FormatInt(ks.Zipf.From, 10)
	}
	return "1"
}
