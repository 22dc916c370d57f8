package load

import (
	"math/rand/v2"
	"strconv"
	"sync"
)

// KeySource draws the keys requests ask for. Implementations are seeded
// and safe for concurrent use.
type KeySource interface {
	Key() string
}

// Keys draws whole numbers from a seeded Zipf distribution: the testbed's
// item ids, and Zipf key spaces of target files. It is safe for concurrent
// use.
type Keys struct {
	mu   sync.Mutex
	zipf *rand.Zipf
	from int64
}

// NewKeys returns ids in [1, n] with P(id) ∝ id^-s.
func NewKeys(n int, s float64, seed uint64) *Keys { return NewZipfKeys(1, int64(n), s, seed) }

// NewZipfKeys returns keys in [from, to] with P(k) ∝ (k-from+1)^-s: from
// is the hottest.
func NewZipfKeys(from, to int64, s float64, seed uint64) *Keys {
	r := rand.New(rand.NewPCG(seed, 0x6b657973)) // "keys"
	return &Keys{zipf: rand.NewZipf(r, s, 1, uint64(to-from)), from: from}
}

// Next returns the next id.
func (k *Keys) Next() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return int64(k.zipf.Uint64()) + k.from
}

// Key returns the next id as a key.
func (k *Keys) Key() string { return strconv.FormatInt(k.Next(), 10) }

// uniform draws uniformly from n keys, the i-th named by at(i).
type uniform struct {
	mu  sync.Mutex
	rng *rand.Rand
	n   int64
	at  func(int64) string
}

func (u *uniform) Key() string {
	u.mu.Lock()
	i := u.rng.Int64N(u.n)
	u.mu.Unlock()
	return u.at(i)
}

// NewListKeys draws uniformly from list, which must not be empty.
func NewListKeys(list []string, seed uint64) KeySource {
	return &uniform{rng: rand.New(rand.NewPCG(seed, 0x6b657973)), n: int64(len(list)), at: func(i int64) string { return list[i] }}
}

// NewRangeKeys draws uniformly from the whole numbers [from, to].
func NewRangeKeys(from, to int64, seed uint64) KeySource {
	return &uniform{rng: rand.New(rand.NewPCG(seed, 0x6b657973)), n: to - from + 1,
		at: func(i int64) string { return strconv.FormatInt(from+i, 10) }}
}
