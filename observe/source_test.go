package observe

import (
	"context"
	"testing"
)

// fakeStore is a throwaway store: a database, a cache and a stream
// holder, which says what it was asked. A nil one reads nothing, as the
// store packages' nil handles do.
type fakeStore struct{ db, cache, depth int }

func (f *fakeStore) ReadDB(_ context.Context, src Source, smp *Sample) error {
	if f != nil {
		f.db++
		smp.Calls, smp.Active = 7, int64(len(src.Role))
	}
	return nil
}

func (f *fakeStore) ReadCache(_ context.Context, smp *Sample) error {
	if f != nil {
		f.cache++
		smp.Hits, smp.CacheInstance = 3, "fake"
	}
	return nil
}

func (f *fakeStore) Depth(context.Context, Queue) (int64, error) {
	if f != nil {
		f.depth++
	}
	return 2, nil
}

// A sample asks each declared store once: the database with the source's
// selection; Memcached as the cache, a Redis beside it for the queue
// only; a nil handle (a target's field left nil) reads nothing.
func TestReadAsksEachStore(t *testing.T) {
	ctx := context.Background()
	db, mc, rdb := &fakeStore{}, &fakeStore{}, &fakeStore{}
	var none *fakeStore
	s, err := Source{DB: none, MySQL: db, Memcached: mc, Redis: rdb, Role: "app", Queue: Queue{Stream: "w"}}.Read(ctx)
	if err != nil || s.Calls != 7 || s.Active != 3 || s.Hits != 3 || s.QueueDepth != 2 || *db != (fakeStore{db: 1}) || *mc != (fakeStore{cache: 1}) || *rdb != (fakeStore{depth: 1}) {
		t.Errorf("Read = %+v, %v; asked db %+v, memcached %+v, redis %+v; want each once, Redis for the queue only", s, err, *db, *mc, *rdb)
	}
	s, err = Source{DB: none, Memcached: none, Redis: rdb}.Read(ctx)
	if err != nil || s.Calls != 0 || s.Hits != 3 || rdb.cache != 1 || rdb.depth != 1 {
		t.Errorf("Read without a database or Memcached = %+v, %v; redis %+v; want Redis as the cache, no queue", s, err, *rdb)
	}
}
